"""``agentladder export``: a store's judgments, skills, deliberations or ledger as JSONL or
CSV, read one page at a time (docs/cli.md, "Export")."""

from agentladder.exporting.items import COLUMNS, Kind, items, parse_since
from agentladder.exporting.output import Format, write_export

__all__ = ["COLUMNS", "Format", "Kind", "items", "parse_since", "write_export"]
