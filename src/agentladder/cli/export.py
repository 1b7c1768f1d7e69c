"""``agentladder export``: judgments, skills, deliberations or the ledger of a store as
JSONL or CSV, to stdout or atomically to ``--out FILE`` (``agentladder.exporting``)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from agentladder.cli.commands import app
from agentladder.cli.data import ConfigOpt, StoreOpt, _with_services
from agentladder.cli.stores import DbOpt, store_url
from agentladder.exporting import COLUMNS, Format, Kind, items, parse_since, write_export
from agentladder.exporting.output import check_out
from agentladder.services.container import Services

__all__ = ["export"]

err = Console(stderr=True)


@app.command()
def export(
    kind: Annotated[
        Kind, typer.Argument(help="What to export: judgments, skills, deliberations or ledger.")
    ],
    since: Annotated[
        str | None,
        typer.Option(
            help="Only items from this ISO 8601 time on (no zone: UTC): judgments and ledger"
            " lines by when they were recorded, deliberations by their creation, skills by"
            " their latest evidence."
        ),
    ] = None,
    file_format: Annotated[
        Format, typer.Option("--format", help="jsonl (one JSON object a line) or csv.")
    ] = Format.JSONL,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write to FILE (atomically) instead of stdout."),
    ] = None,
    config: ConfigOpt = None,
    store: StoreOpt = None,
    db: DbOpt = None,
) -> None:
    """Export a store's judgments, skills, deliberations or xp_history ledger as JSONL or
    CSV with the API's field names, read one page at a time; exported judgments import
    again with `agentladder import`."""
    cut = None if since is None else parse_since(since)
    if out is not None:
        check_out(out)
    started = time.perf_counter()

    async def work(services: Services) -> int:
        rows = items(
            services.store, kind, cut, rules=services.settings.skill, now=services.skill.now()
        )
        return await write_export(rows, COLUMNS[kind], file_format, out)

    count = _with_services(config, store_url(store, db), work)
    if out is not None:
        seconds = time.perf_counter() - started
        err.print(f"exported {count:,} {kind.value} to {out} in {seconds:.1f} s", highlight=False)
