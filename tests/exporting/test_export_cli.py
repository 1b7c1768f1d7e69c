"""`agentladder export`: CSV with a header and JSON in nested cells, --since, one-line
errors naming the option and value, and --out that never leaves a partial file."""

from __future__ import annotations

import asyncio
import csv
import io
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentladder.cli import app
from agentladder.exporting import COLUMNS, Format, Kind, write_export

runner = CliRunner()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A SQLite store with three judgments of two agents (one at a given time of judging)."""
    path = tmp_path / "s.db"
    for agent, contract, extra in [("a1", "c1", []), ("a2", "c2", ["--task-type", "sql"]),
                                   ("a1", "c3", ["--judge", "gpt-4o"])]:  # fmt: skip
        result = runner.invoke(app, ["judge", "--agent-id", agent, "--contract-id", contract,
                                     "--score", "9.5", "--new-agent", "--create", "--db",
                                     str(path), *extra])  # fmt: skip
        assert result.exit_code == 0, result.output
    return path


def test_csv_has_a_header_of_the_api_fields_and_a_row_per_item(db: Path) -> None:
    """Judgments as CSV: the judgment's fields as header, absent fields empty, the judge kept."""
    result = runner.invoke(app, ["export", "judgments", "--db", str(db), "--format", "csv"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert tuple(rows[0]) == COLUMNS[Kind.JUDGMENTS]
    assert [(r["agent_id"], r["contract_id"], r["judge"]) for r in rows] == [
        ("a1", "c1", ""), ("a2", "c2", ""), ("a1", "c3", "gpt-4o")
    ]  # fmt: skip
    assert rows[1]["task_type"] == "sql"
    assert rows[1]["score"] == "9.5"
    assert rows[0]["success"] == "true"


def test_nested_values_are_json_in_their_cell(db: Path) -> None:
    """A deliberation's rounds, agents and result are JSON text in their CSV cells."""
    run = runner.invoke(app, ["deliberate", "q", "--agent", "audit_expert", "--agent",
                              "legal_generalist", "--config", "examples/simulated.yaml",
                              "--db", str(db), "--scope", "quick"])  # fmt: skip
    assert run.exit_code == 0, run.output
    lines = runner.invoke(app, ["export", "deliberations", "--db", str(db)]).stdout.splitlines()
    record = json.loads(lines[0])
    result = runner.invoke(app, ["export", "deliberations", "--db", str(db), "--format", "csv"])
    (row,) = list(csv.DictReader(io.StringIO(result.stdout)))
    assert json.loads(row["rounds"]) == record["rounds"]
    assert json.loads(row["agents"]) == record["agents"]
    assert row["id"] == record["id"]
    assert "submissions" not in row


def test_since_keeps_what_was_recorded_from_then_on(db: Path) -> None:
    """--since in the future keeps nothing; in the past, everything; a date alone is UTC."""

    def lines(*args: str) -> list[str]:
        result = runner.invoke(app, ["export", "ledger", "--db", str(db), *args])
        assert result.exit_code == 0, result.output
        return result.stdout.splitlines()

    every = lines()
    assert len(every) >= 6
    assert lines("--since", "2000-01-01") == every
    assert lines("--since", "2999-01-01T00:00:00+02:00") == []


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--since", "yesterday"], "error: --since: must be an ISO 8601 time"),
        (["--out", "no/such/dir/x.jsonl"], "error: --out: its directory no/such/dir does not"),
    ],
)
def test_bad_input_is_one_line_naming_the_option_and_value(
    db: Path, args: list[str], line: str
) -> None:
    """A bad --since or --out is one line with the option and the value, exit 1."""
    result = runner.invoke(app, ["export", "judgments", "--db", str(db), *args])
    assert result.exit_code == 1
    assert result.output.startswith(line), result.output
    assert args[1] in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_out_is_replaced_whole_or_not_at_all(db: Path, tmp_path: Path) -> None:
    """--out: a finished export replaces the file; one that fails midway leaves the older
    file as it was and no temporary file beside it."""
    out = tmp_path / "judgments.jsonl"
    out.write_text("older\n")
    result = runner.invoke(app, ["export", "judgments", "--db", str(db), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert len(out.read_text().splitlines()) == 3
    assert "exported 3 judgments to" in result.output

    async def failing() -> AsyncIterator[tuple[dict[str, Any], str | None]]:
        yield {"agent_id": "a"}, None
        raise OSError("the store went away")

    with pytest.raises(OSError, match="went away"):
        asyncio.run(write_export(failing(), ("agent_id",), Format.CSV, out))
    assert len(out.read_text().splitlines()) == 3
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_a_missing_store_is_refused(tmp_path: Path) -> None:
    """An export of a store that does not exist is one line, creating nothing."""
    missing = tmp_path / "nothing.db"
    result = runner.invoke(app, ["export", "skills", "--db", str(missing)])
    assert result.exit_code == 1
    assert result.output.startswith("error: store: no such SQLite file")
    assert not missing.exists()
