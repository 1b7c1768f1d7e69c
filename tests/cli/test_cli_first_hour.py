"""The data commands as a newcomer meets them: --db, stores that do not exist, the
leaderboard of a task type, deliberate's exclusions, answer and cost, rounded profiles."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentladder.cli import app

runner = CliRunner()
PRICED = """
agents:
  - name: sim_a
    input_price_per_mtok: 2.5
    output_price_per_mtok: 10
    backend: {kind: simulated, quality: 6.0}
  - name: sim_b
    input_price_per_mtok: 3
    output_price_per_mtok: 15
    backend: {kind: simulated, quality: 9.0}
"""


def ok(*args: str) -> str:
    """Run the command; it must succeed; its output."""
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def one_line(*args: str) -> str:
    """Run the command; it must fail with exit 1 and exactly one line, no traceback."""
    result = runner.invoke(app, list(args))
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert "Traceback" not in result.output
    return lines[0]


def priced(tmp_path: Path) -> str:
    path = tmp_path / "agents.yaml"
    path.write_text(PRICED, encoding="utf-8")
    return str(path)


def judge(db: Path, contract: str, score: str, task_type: str, *extra: str) -> None:
    ok("judge", "--db", str(db), "--agent-id", "sim_a", "--contract-id", contract,
       "--score", score, "--task-type", task_type, *extra)  # fmt: skip


def row_of(output: str, agent: str) -> list[str]:
    """The cells of ``agent``'s row in a rich table."""
    line = next(line for line in output.splitlines() if f" {agent} " in line)
    return [cell.strip() for cell in line.strip("│┃ \n").split("│")]


def test_leaderboard_of_a_task_type_shows_the_specialization_s_figures(tmp_path: Path) -> None:
    """Two audit tasks (9, 7) and one code task (2): the audit board shows 2 tasks, average
    8.00 and the audit XP and level, not the overall 3 tasks and 6.00."""
    db = tmp_path / "board.db"
    judge(db, "c1", "9", "audit", "--create")
    judge(db, "c2", "7", "audit")
    judge(db, "c3", "2", "code")
    entry = json.loads(ok("leaderboard", "--db", str(db), "--task-type", "audit", "--json"))[
        "entries"
    ][0]
    cells = row_of(ok("leaderboard", "--db", str(db), "--task-type", "audit"), "sim_a")
    assert cells == ["1", "sim_a", str(entry["specialization_xp"]),
                     entry["specialization_level"], "2", "8.00"]  # fmt: skip
    assert entry["specialization_xp"] != entry["xp"]
    overall = row_of(ok("leaderboard", "--db", str(db)), "sim_a")
    assert overall == ["1", "sim_a", str(entry["xp"]), entry["level"], "3", "6.00"]


def test_profile_prints_rounded_numbers(tmp_path: Path) -> None:
    """Scores 9, 8, 8: the profile shows average 8.33, never 8.333..."""
    db = tmp_path / "p.db"
    for number, score in enumerate(("9", "8", "8")):
        judge(db, f"c{number}", score, "audit", "--create")
    shown = ok("profile", "sim_a", "--db", str(db))
    assert "average score 8.33" in shown
    assert "audit:" in shown
    assert "average 8.33, best 9.00" in shown
    assert "8.333" not in shown


def test_deliberate_shows_the_excluded_the_answer_and_the_cost(tmp_path: Path) -> None:
    """An agent known by its judgments alone (never registered) is listed as excluded
    with its reason (one nobody knows is refused: ``test_cli_did_you_mean.py``);
    --task-type and --complexity reach the record; the winning answer and the cost (the
    sum of the stored record's proposal costs) are shown."""
    db = tmp_path / "d.db"
    config = priced(tmp_path)
    ok("judge", "--agent-id", "ghost", "--contract-id", "c0", "--score", "5", "--new-agent",
       "--config", config, "--db", str(db), "--create")  # fmt: skip
    shown = ok("deliberate", "Which is best?", "--agent", "sim_a", "--agent", "sim_b",
               "--agent", "ghost", "--scope", "quick", "--task-type", "audit",
               "--complexity", "simple", "--config", config, "--db", str(db))  # fmt: skip
    assert "excluded: ghost (rank 0, unknown)" in shown
    conn = sqlite3.connect(db)
    (doc,) = conn.execute("SELECT doc FROM deliberations").fetchone()
    conn.close()
    record = json.loads(doc)  # the record as stored
    assert (record["task_type"], record["complexity"]) == ("audit", "simple")
    winner = record["result"]
    assert f"answer (by {winner['agent_id']}, score {winner['aggregated_score']:.2f}):" in shown
    assert winner["content"].splitlines()[0] in shown
    cost = record["total_cost"]  # every call of the deliberation, at each agent's prices
    assert cost > 0
    assert f"cost: ${cost:.4f}" in shown
    assert "promoted: sim_b" in shown
    why = record["ranking"]["explanation"]  # why sim_b, as the record holds it
    assert why
    assert f"promoted: sim_b why: {why}" in " ".join(shown.split())  # the console wraps it


def test_too_few_qualified_agents_is_one_line_naming_each_excluded(tmp_path: Path) -> None:
    """--complexity complex among rookies: one line naming each agent and its reason."""
    db = tmp_path / "d.db"
    line = one_line("deliberate", "q", "--agent", "sim_a", "--agent", "sim_b",
                    "--complexity", "complex", "--config", priced(tmp_path), "--db", str(db),
                    "--create")  # fmt: skip
    assert line.startswith("error: a deliberation needs at least 2 qualified agents")
    assert "sim_a (rank 0, complexity_not_allowed)" in line
    assert "sim_b (rank 0, complexity_not_allowed)" in line


COMMANDS = [
    ["agents"], ["leaderboard"], ["leaderboard", "--task-type", "audit"], ["profile", "sim_a"],
    ["skills"], ["oracle", "verify"],
    ["judge", "--agent-id", "sim_a", "--contract-id", "c1", "--score", "8"],
    ["deliberate", "q", "--agent", "sim_a", "--agent", "sim_b"],
]  # fmt: skip


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: "-".join(c[:2]))
def test_a_data_command_on_a_missing_file_says_so_and_creates_nothing(
    tmp_path: Path, command: list[str]
) -> None:
    """--db FILE that does not exist: one line naming the store, exit 1, no file made."""
    missing = tmp_path / "typo.db"
    line = one_line(*command, "--db", str(missing))
    assert line.startswith(f"error: store: no such SQLite file {missing}: check the path")
    assert not missing.exists()


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: "-".join(c[:2]))
def test_every_data_command_takes_db(tmp_path: Path, command: list[str]) -> None:
    """Each data command reads the SQLite file --db names (made by judge --create)."""
    db = tmp_path / "here.db"
    judge(db, "c0", "9", "audit", "--create")
    shown = ok(*command, "--config", priced(tmp_path), "--db", str(db))
    assert "sim_a" in shown or command[:2] == ["oracle", "verify"]
    if command[:2] == ["oracle", "verify"]:
        assert "ok: 1 profiles" in shown


def test_db_and_store_together_are_one_line(tmp_path: Path) -> None:
    """--db and --store name the store twice: one line naming --db."""
    line = one_line("leaderboard", "--db", str(tmp_path / "x.db"), "--store", "memory://")
    assert line.startswith("error: --db: names the store a second time")


def test_a_nats_server_without_the_store_says_so(nats_store_url: str) -> None:
    """A NATS URL whose prefix holds no store: one line; judge --create makes it, then
    the leaderboard reads it."""
    line = one_line("leaderboard", "--store", nats_store_url)
    assert line.startswith("error: store: no agentladder store on this NATS server")
    ok("judge", "--store", nats_store_url, "--agent-id", "sim_a", "--contract-id", "c1",
       "--score", "8", "--create")  # fmt: skip
    assert "sim_a" in ok("leaderboard", "--store", nats_store_url)


@pytest.mark.parametrize(
    ("args", "start"),
    [
        (["judge", "--agent-id", "a", "--contract-id", "c", "--score", "11"], "error: score: "),
        (["judge", "--agent-id", "bad name!", "--contract-id", "c"], "error: agent_id: "),
        (["deliberate", "q", "--agent", "a", "--agent", "b", "--scope", "huge"],
         "error: scope: "),
        (["deliberate", "q", "--agent", "a", "--agent", "b", "--complexity", "huge"],
         "error: complexity: "),
        (["leaderboard", "--store", "sqlite:////nonexistent/x.db"], "error: store: "),
    ],
)  # fmt: skip
def test_the_issue_s_bad_inputs_are_one_line(args: list[str], start: str) -> None:
    """Each bad input a newcomer tried: one line naming the field, exit 1."""
    assert one_line(*args).startswith(start)


def test_judging_an_unknown_agent_is_one_line_with_the_suggestion(tmp_path: Path) -> None:
    """By default, judge of an id nobody configured, registered or judged is one line
    naming agent_id, the closest known id and the value, exit 1, nothing stored; with
    --new-agent it is judged; a configured agent's judgment is applied."""
    config = tmp_path / "agents.yaml"
    config.write_text(PRICED, encoding="utf-8")
    db = tmp_path / "s.db"
    judged = ["judge", "--config", str(config), "--db", str(db), "--contract-id", "c1",
              "--score", "8", "--create"]  # fmt: skip
    line = one_line(*judged, "--agent-id", "sim-a")
    assert line.startswith("error: agent_id: is not a known agent")
    assert "did you mean sim_a" in line
    assert line.endswith("('sim-a')")
    assert "+" in ok(*judged, "--agent-id", "sim_a")
    agents = json.loads(ok("agents", "--config", str(config), "--db", str(db), "--json"))
    assert "sim-a" not in [a["name"] for a in agents["agents"]]
    board = json.loads(ok("leaderboard", "--config", str(config), "--db", str(db), "--json"))
    assert [row["agent_id"] for row in board["entries"]] == ["sim_a"]
    assert "+" in ok(*judged, "--agent-id", "outsider", "--new-agent")
