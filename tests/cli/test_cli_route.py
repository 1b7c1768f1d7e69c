"""``agentladder route`` on a SQLite store: the table, JSON, and too few agents in one line."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agentladder.cli import app
from tests.cli.test_cli_data import config_file, run

runner = CliRunner()


def test_route_after_deliberations_picks_the_better_agent_first(tmp_path: Path) -> None:
    """After two deliberations, route --count 2 lists sim_b (quality 9) before sim_a, with
    reasons; --json repeats the same choice with --seed."""
    config = str(config_file(tmp_path))
    for _ in range(2):
        run("deliberate", "Which is best?", "--agent", "sim_a", "--agent", "sim_b",
            "--scope", "standard", "--config", config, "--create")  # fmt: skip
    out = json.loads(run("route", "--task-type", "deliberation", "--count", "2", "--config",
                         config, "--json", "--seed", "5"))  # fmt: skip
    assert [p["agent_id"] for p in out["agents"]] == ["sim_b", "sim_a"]
    assert out["agents"][0]["low"] > out["agents"][1]["low"]
    assert out["seed"] == 5
    table = run("route", "--task-type", "deliberation", "--count", "2", "--config", config)
    assert "sim_b" in table
    assert "lower bound" in table


def test_too_few_agents_is_one_line_and_exit_1(tmp_path: Path) -> None:
    """Three asked of two agents: one line naming how many qualify, exit 1."""
    config = str(config_file(tmp_path))
    run("judge", "--agent-id", "sim_a", "--contract-id", "c1", "--score", "5", "--task-type",
        "x", "--config", config, "--create")  # fmt: skip
    result = runner.invoke(app, ["route", "--task-type", "x", "--count", "3", "--config", config])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert lines == ["error: the routing needs at least 3 qualified agents, 2 qualify"]


def test_cheapest_above_without_floor_is_one_line(tmp_path: Path) -> None:
    """--strategy cheapest_above without --floor: one line naming quality_floor, exit 1."""
    config = str(config_file(tmp_path))
    result = runner.invoke(
        app, ["route", "--task-type", "x", "--strategy", "cheapest_above", "--config", config]
    )
    assert result.exit_code == 1
    assert "quality_floor" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_route_on_a_missing_store_says_so(tmp_path: Path) -> None:
    """route reads the store: one that does not exist is one line, exit 1, not created."""
    config = str(config_file(tmp_path))
    result = runner.invoke(app, ["route", "--task-type", "x", "--count", "2", "--config", config])
    assert result.exit_code == 1
    assert result.output.startswith("error: store: no such SQLite file")
    assert len(result.output.strip().splitlines()) == 1
    assert not any(tmp_path.glob("*.db"))


def test_route_says_it_cannot_see_health_or_cooldowns(tmp_path: Path) -> None:
    """route reads the store, not the serving instance's health: one note on stderr says
    so and names POST /route; stdout stays the JSON answer."""
    config = str(config_file(tmp_path))
    run("judge", "--agent-id", "sim_a", "--contract-id", "c1", "--score", "5", "--task-type",
        "x", "--config", config, "--create")  # fmt: skip
    result = runner.invoke(app, ["route", "--task-type", "x", "--count", "2", "--config",
                                 config, "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)["agents"]) == 2
    assert result.stderr.startswith("note: health and cooldowns are not seen here")
    assert "`POST /route` on the server weighs them" in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_route_gives_one_agent_by_default_and_takes_a_floor_share(tmp_path: Path) -> None:
    """Without --count, one agent; --floor-share and --confidence make a relative floor,
    named in the JSON (the floor applied, the reference) and in the table's title."""
    config = str(config_file(tmp_path))
    for _ in range(2):
        run("deliberate", "Which is best?", "--agent", "sim_a", "--agent", "sim_b",
            "--scope", "standard", "--config", config, "--create")  # fmt: skip
    out = json.loads(run("route", "--task-type", "deliberation", "--config", config, "--json"))
    assert len(out["agents"]) == 1
    asked = ["route", "--task-type", "deliberation", "--strategy", "cheapest_above",
             "--floor-share", "0.8", "--confidence", "0.6", "--explore-share", "0",
             "--config", config]  # fmt: skip
    out = json.loads(run(*asked, "--json"))
    assert out["quality_floor"] == round(0.8 * out["reference"]["skill"], 6)
    assert (out["quality_floor_share"], out["confidence"]) == (0.8, 0.6)
    assert len(out["agents"]) == 1
    assert out["agents"][0]["p_floor"] is not None
    shown = " ".join(run(*asked).split())
    assert f"floor {out['quality_floor']:.2f} with probability 0.6" in shown
