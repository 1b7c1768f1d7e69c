"""`agentladder export judgments` and `agentladder import`: an export imports into a fresh
store as the same judgments, awards and ledger, and into the store it came from as
duplicates only, on SQLite and on NATS."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentladder.cli import app

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "examples" / "simulated.yaml"
LINES = 40


@pytest.fixture(params=["sqlite", "nats"])
def two_stores(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """Two empty stores of one backend: where the judgments were made, and a fresh one."""
    if request.param == "nats":
        nats_url = request.getfixturevalue("session_nats_server").url
        from tests.conftest import unique_nats_url

        return unique_nats_url(nats_url), unique_nats_url(nats_url)
    return f"sqlite:///{tmp_path / 'origin.db'}", f"sqlite:///{tmp_path / 'fresh.db'}"


def _cli(*args: str) -> Any:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result


def _history(tmp_path: Path) -> Path:
    """A file of judgments with every kind of field: scales, judges, times of judging."""
    path = tmp_path / "history.jsonl"
    with path.open("w") as out:
        for i in range(LINES):
            line: dict[str, Any] = {
                "agent_id": f"agent-{i % 4}", "contract_id": f"c-{i}",
                "task_type": ("sql", "code")[i % 2], "score": (i * 7) % 11,
                "cost": 0.001 * i, "success": i % 9 != 0,
            }  # fmt: skip
            if i % 3 == 0:
                line.update(score=(i * 7) % 101, scale="0-100")
            if i % 5 == 0:
                line["judge"] = "gpt-4o"
            if i % 4 == 1:
                line["observed_at"] = f"2026-01-{1 + i % 28:02d}T10:00:00+00:00"
            out.write(json.dumps(line) + "\n")
    return path


def _judgments(path: Path) -> list[dict[str, Any]]:
    """The lines of an export, without ``history`` (an import marks every judgment so), by
    agent (each agent's in the order applied: NATS applies several agents' at once)."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    plain = [{k: v for k, v in line.items() if k != "history"} for line in lines]
    return sorted(plain, key=lambda line: str(line["agent_id"]))


def _ledger(store: str) -> list[tuple[Any, ...]]:
    """Every ledger line of a store but its id and time."""
    out = _cli("export", "ledger", "--store", store).stdout
    lines = [json.loads(line) for line in out.splitlines()]
    found = [(e["agent_id"], e["event"], e["xp_awarded"], e["contract_id"]) for e in lines]
    return sorted(found, key=lambda line: str(line[0]))


def test_an_export_round_trips_through_import(two_stores: tuple[str, str], tmp_path: Path) -> None:
    """Exported judgments import into a fresh store as the same judgments and ledger (twice:
    the second time all duplicates), and into their own store as duplicates only."""
    origin, fresh = two_stores
    for i in range(3):  # a configured agent: the Oracle fills in its provider and model
        _cli("judge", "--config", str(CONFIG), "--store", origin, "--create",
             "--agent-id", "audit_expert", "--contract-id", f"t-{i}", "--score", "8")  # fmt: skip
    _cli("import", str(_history(tmp_path)), "--store", origin, "--json")
    exported = tmp_path / "judgments.jsonl"
    _cli("export", "judgments", "--store", origin, "--out", str(exported))
    first = _judgments(exported)
    assert len(first) == LINES + 3
    assert {j["provider"] for j in first if j["agent_id"] == "audit_expert"} == {"simulated"}

    again = json.loads(_cli("import", str(exported), "--store", origin, "--json").stdout)
    assert (again["imported"], again["duplicate"], again["conflicting"]) == (0, LINES + 3, 0)

    into = json.loads(_cli("import", str(exported), "--store", fresh, "--json").stdout)
    assert (into["imported"], into["duplicate"], into["conflicting"]) == (LINES + 3, 0, 0)
    twice = json.loads(_cli("import", str(exported), "--store", fresh, "--json").stdout)
    assert (twice["imported"], twice["duplicate"], twice["conflicting"]) == (0, LINES + 3, 0)

    copy = tmp_path / "copy.jsonl"
    _cli("export", "judgments", "--store", fresh, "--out", str(copy))
    assert _judgments(copy) == first
    assert _ledger(fresh) == _ledger(origin)
    _cli("oracle", "verify", "--store", fresh)
