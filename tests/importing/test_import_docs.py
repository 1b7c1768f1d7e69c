"""docs/import.md says exactly what import accepts: its JSONL table names every field a
line may hold and no other, each complexity it lists is accepted, and the only ones
(`moderate` and `expert`, listed by mistake before, are refused naming the field)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from agentladder.cli import app
from agentladder.domain.rules import Complexity
from agentladder.importing.jsonl import IMPORT_FIELDS
from agentladder.services.oracle.models import JudgmentRequest

DOC = Path(__file__).resolve().parents[2] / "docs" / "import.md"
runner = CliRunner()


def _jsonl_rows() -> dict[str, str]:
    """Field name -> its row's second cell (the type), from the JSONL section's table."""
    section = DOC.read_text(encoding="utf-8").split("\n## JSONL\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, str] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 4 or not cells[0].startswith("`"):
            continue
        for name in re.findall(r"`([a-z_]+)`", cells[0]):
            rows[name] = cells[1]
    return rows


def test_the_jsonl_table_names_every_field_a_line_may_hold() -> None:
    assert set(_jsonl_rows()) == set(JudgmentRequest.model_fields) | set(IMPORT_FIELDS)


def test_the_documented_complexities_are_exactly_the_accepted_ones(tmp_path: Path) -> None:
    listed = re.findall(r"`([a-z]+)`", _jsonl_rows()["complexity"])
    assert listed == [c.value for c in Complexity]
    lines = [
        {"agent_id": "a", "contract_id": f"c-{value}", "score": 8, "complexity": value}
        for value in [*listed, "moderate", "expert"]
    ]
    path = tmp_path / "h.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    result = runner.invoke(app, ["import", str(path), "--db", str(tmp_path / "x.db"), "--json"])
    summary = json.loads(result.stdout)
    assert (result.exit_code, summary["imported"], summary["refused"]) == (1, 3, 2)
    assert [p["error"] for p in summary["problems"]] == [
        f"complexity: Input should be 'simple', 'medium' or 'complex' ('{value}')"
        for value in ("moderate", "expert")
    ]
