"""The data commands on a SQLite store: judge, profile, leaderboard, agents, deliberate, verify."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from typer.testing import CliRunner

from agentladder.cli import app

runner = CliRunner()
CONFIG = """
store: sqlite:///{db}
agents:
  - name: sim_a
    backend: {{kind: simulated, quality: 6.0}}
  - name: sim_b
    backend: {{kind: simulated, quality: 9.0}}
"""


def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "agents.yaml"
    path.write_text(CONFIG.format(db=tmp_path / "cli.db"), encoding="utf-8")
    return path


def run(*args: str) -> str:
    """Run the command; it must succeed; its stdout (notes and progress are on stderr)."""
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def test_judge_profile_and_leaderboard(tmp_path: Path) -> None:
    """judge awards itemized XP once; profile and leaderboard show it, also as JSON."""
    config = str(config_file(tmp_path))
    judged = ["judge", "--config", config, "--agent-id", "sim_a", "--contract-id", "c1",
              "--score", "8.5", "--retries", "1", "--cost", "0.05", "--budget", "0.1",
              "--create"]  # fmt: skip
    out = run(*judged)
    assert "+45 XP (task 35, achievements 10); total now 45 XP" in out
    assert "quality_above_8: +15" in out
    assert "duplicate" in run(*judged)
    profile = json.loads(run("profile", "sim_a", "--config", config, "--json"))
    assert profile["xp"] == 45
    board = json.loads(run("leaderboard", "--config", config, "--json"))
    assert [e["agent_id"] for e in board["entries"]] == ["sim_a"]


def test_deliberate_agents_and_verify(tmp_path: Path) -> None:
    """deliberate promotes the better agent; agents shows it; oracle verify finds no difference."""
    config = str(config_file(tmp_path))
    out = run("deliberate", "Which is best?", "--agent", "sim_a", "--agent", "sim_b",
              "--scope", "quick", "--config", config, "--create")  # fmt: skip
    assert "promoted: sim_b" in out
    listed = json.loads(run("agents", "--config", config, "--json"))
    ranks = {a["name"]: a["rank"] for a in listed["agents"]}
    assert ranks == {"sim_a": 0, "sim_b": 1}
    assert "ok" in run("oracle", "verify", "--config", config)


def test_verify_fails_on_a_tampered_store(tmp_path: Path) -> None:
    """oracle verify exits 1 and names the agent and field when a profile was altered."""
    config = str(config_file(tmp_path))
    run(
        "judge",
        "--config",
        config,
        "--agent-id",
        "sim_a",
        "--contract-id",
        "c1",
        "--score",
        "9",
        "--create",
    )
    conn = sqlite3.connect(tmp_path / "cli.db")
    row = conn.execute("SELECT profile_json FROM agent_profiles WHERE id = 'sim_a'").fetchone()
    data = json.loads(row[0])
    data["xp"] = 10_000
    conn.execute(
        "UPDATE agent_profiles SET profile_json = ? WHERE id = 'sim_a'", (json.dumps(data),)
    )
    conn.commit()
    conn.close()
    result = runner.invoke(app, ["oracle", "verify", "--config", config])
    assert result.exit_code == 1
    assert "sim_a" in result.output
    assert "xp" in result.output


def test_bad_input_exits_1_naming_the_field(tmp_path: Path) -> None:
    """A judged score of 11 is refused with the field named, exit status 1."""
    config = str(config_file(tmp_path))
    result = runner.invoke(app, ["judge", "--config", config, "--agent-id", "sim_a",
                                 "--contract-id", "c1", "--score", "11"])  # fmt: skip
    assert result.exit_code != 0


def test_an_agent_judged_without_scores_has_no_average_score(tmp_path: Path) -> None:
    """An agent judged only without a score shows "-" as its average (overall and at the
    task type) in leaderboard and profile, never 0.00; a scored agent keeps its figure."""
    config = str(config_file(tmp_path))
    run("judge", "--agent-id", "sim_a", "--contract-id", "c1", "--task-type", "code",
        "--config", config, "--create")  # fmt: skip
    run("judge", "--agent-id", "sim_b", "--contract-id", "c2", "--task-type", "code",
        "--score", "7", "--config", config)  # fmt: skip
    for extra in ([], ["--task-type", "code"]):
        board = run("leaderboard", "--config", config, *extra)
        rows = {line.split("│")[2].strip(): line for line in board.splitlines() if "sim_" in line}
        assert rows["sim_a"].split("│")[6].strip() == "-"
        assert rows["sim_b"].split("│")[6].strip() == "7.00"
    shown = run("profile", "sim_a", "--config", config)
    assert "average score -," in shown
    assert "code: 15 XP, rookie, 1 tasks, average -, best -" in shown
