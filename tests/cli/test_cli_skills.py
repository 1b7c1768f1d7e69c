"""``agentladder skills`` and ``oracle verify`` on the skill log, on a SQLite store."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from typer.testing import CliRunner

from agentladder.cli import app
from tests.cli.test_cli_data import config_file, run

runner = CliRunner()


def test_skills_after_deliberations_and_a_tampered_state_fails_verify(tmp_path: Path) -> None:
    """Two deliberations: skills lists the better agent first with its interval; verify
    passes, then fails naming the agent once its stored skill state is altered."""
    config = str(config_file(tmp_path))
    for _ in range(2):
        run("deliberate", "Which is best?", "--agent", "sim_a", "--agent", "sim_b",
            "--scope", "standard", "--config", config, "--create")  # fmt: skip
    board = json.loads(run("skills", "--config", config, "--json"))
    entries = board["entries"]
    assert [e["agent_id"] for e in entries] == ["sim_b", "sim_a"]
    assert entries[0]["low"] <= entries[0]["skill"] <= entries[0]["high"]
    table = run("skills", "--config", config, "--task-type", "deliberation")
    assert "sim_b" in table
    assert "interval" in table
    assert "2 skill events" in " ".join(run("oracle", "verify", "--config", config).split())
    conn = sqlite3.connect(tmp_path / "cli.db")
    (data,) = conn.execute(
        "SELECT state_json FROM skill_states WHERE agent_id = 'sim_a'"
    ).fetchone()
    state = json.loads(data)
    state["overall"]["mean"] += 1.0
    conn.execute(
        "UPDATE skill_states SET state_json = ? WHERE agent_id = 'sim_a'", (json.dumps(state),)
    )
    conn.commit()
    conn.close()
    result = runner.invoke(app, ["oracle", "verify", "--config", config])
    assert result.exit_code == 1
    assert "sim_a" in result.output
    assert "skill" in result.output
