"""After ``agentladder demo``, the data commands find the demo's file, or their error
names ``--db agentladder-demo.db``; ``deliberate`` and ``route`` reach the demo's agents."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentladder.cli import app

runner = CliRunner()
DEMO = "agentladder-demo.db"


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A file ``agentladder demo`` wrote (a short demo: six deliberations)."""
    db = tmp_path_factory.mktemp("demo") / DEMO
    result = runner.invoke(app, ["demo", "--db", str(db), "--deliberations", "6"])
    assert result.exit_code == 0, result.output
    return db


@pytest.fixture
def demo_here(demo_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder holding a copy of the demo's file, as after ``make demo``."""
    shutil.copy(demo_db, tmp_path / DEMO)
    monkeypatch.chdir(tmp_path)
    return tmp_path / DEMO


def test_with_no_store_named_the_demo_s_file_is_read_and_said(demo_here: Path) -> None:
    """leaderboard with no --config, --store or --db and no agentladder.db reads the demo's
    file: its agents on stdout, one note on stderr naming the file; nothing is created."""
    result = runner.invoke(app, ["leaderboard", "--json"])
    assert result.exit_code == 0, result.output
    entries = json.loads(result.stdout)["entries"]
    assert entries
    assert {e["agent_id"] for e in entries} <= {
        "atlas", "borealis", "cirrus", "dune", "ember", "fjord", "glacier", "harbor",
    }  # fmt: skip
    assert result.stderr.startswith("note: no store named and agentladder.db does not exist")
    assert DEMO in result.stderr
    assert not (demo_here.parent / "agentladder.db").exists()


@pytest.mark.parametrize(
    ("command", "shown"),
    [(["agents"], "atlas"), (["skills"], "tier"), (["profile", "atlas"], "atlas"),
     (["oracle", "verify"], "ok: 8 profiles")],
)  # fmt: skip
def test_every_reading_command_finds_the_demo_s_file(
    demo_here: Path, command: list[str], shown: str
) -> None:
    """agents, skills, profile and oracle verify, with no store named, read the demo's file."""
    result = runner.invoke(app, command)
    assert result.exit_code == 0, result.output
    assert shown in result.stdout


def test_a_missing_store_s_error_names_the_demo_s_file(
    demo_here: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A --db that does not exist beside the demo's file: one line naming
    `--db agentladder-demo.db`; in a folder without it, the line says how to make it."""
    result = runner.invoke(app, ["leaderboard", "--db", "typo.db"])
    assert result.exit_code == 1
    assert result.output.count("\n") == 1
    assert "the demo's store is here: give --db agentladder-demo.db" in result.output
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    monkeypatch.chdir(empty)
    result = runner.invoke(app, ["leaderboard"])
    assert result.exit_code == 1
    assert result.output.startswith("error: store: no such SQLite file agentladder.db")
    assert "`make demo` (or `agentladder demo`) writes one to explore: then --db" in result.output
    assert "--db agentladder-demo.db" in result.output


def test_deliberate_on_the_demo_s_file_reaches_the_demo_s_agents(demo_here: Path) -> None:
    """deliberate --db agentladder-demo.db among two demo agents runs them in process: both
    take part and are scored (not excluded as unreachable)."""
    result = runner.invoke(app, ["deliberate", "Which test first?", "--agent", "atlas",
                                 "--agent", "cirrus", "--scope", "quick", "--db", DEMO,
                                 "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record["status"] == "completed"
    assert record["agents"] == ["atlas", "cirrus"]
    assert record["excluded"] == []
    assert all(score is not None for score in record["scores"].values())


def test_route_takes_db_and_sees_the_demo_s_agents_online(demo_here: Path) -> None:
    """route --db agentladder-demo.db --online-only chooses among the demo's agents (online:
    in process, as serve --demo runs them)."""
    result = runner.invoke(app, ["route", "--task-type", "audit", "--count", "3", "--db", DEMO,
                                 "--online-only", "--json", "--seed", "1"])  # fmt: skip
    assert result.exit_code == 0, result.output
    chosen = json.loads(result.stdout)["agents"]
    assert len(chosen) == 3


def test_another_store_is_not_taken_for_the_demo_s(tmp_path: Path) -> None:
    """A store whose agents are not the demo's keeps its own configuration: deliberate
    without --config finds its agents unreachable, as before."""
    db = tmp_path / "own.db"
    for agent in ("atlas", "cirrus"):
        runner.invoke(app, ["judge", "--db", str(db), "--agent-id", agent, "--contract-id",
                            "c1", "--score", "8", "--new-agent", "--create"])  # fmt: skip
    result = runner.invoke(app, ["deliberate", "q", "--agent", "atlas", "--agent", "cirrus",
                                 "--db", str(db)])  # fmt: skip
    assert result.exit_code == 1
    assert "atlas (rank 0, unknown)" in result.output
