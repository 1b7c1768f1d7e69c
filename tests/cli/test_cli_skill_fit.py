"""``agentladder skills`` says how fresh the board is; ``agentladder skill fit`` fits what
awaits the fit and says what it did; ``agentladder skill judges`` lists the sources of
scores (on a SQLite store)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli_data import config_file, run


def judge(config: str, agent: str, contract: str, score: str, *more: str) -> None:
    run("judge", "--config", config, "--agent-id", agent, "--contract-id", contract,
        "--score", score, "--task-type", "qa", "--create", *more)  # fmt: skip


def test_skills_say_what_awaits_the_fit_and_skill_fit_fits_it(tmp_path: Path) -> None:
    """Three judgments: skills counts them as awaiting the first fit; skill fit fits them
    and says so; skills then says nothing awaits; another judgment awaits; skill fit with
    nothing new says so and fits nothing."""
    config = str(config_file(tmp_path))
    for index, (agent, score) in enumerate([("sim_a", "6"), ("sim_b", "9"), ("sim_b", "8")]):
        judge(config, agent, f"c{index}", score)
    board = json.loads(run("skills", "--config", config, "--json"))
    assert (board["fitted_at"], board["pending"]) == (None, 3)
    table = " ".join(run("skills", "--config", config).split())
    assert "Skill not fitted yet; 3 skill events await the next fit" in table
    assert "`agentladder skill fit` fits them now" in table
    fitted = " ".join(run("skill", "fit", "--config", config).split())
    assert fitted.startswith("fitted: 3 skill events awaited the fit; 3 fitted in all")
    assert fitted.endswith("UTC")
    after = json.loads(run("skills", "--config", config, "--json"))
    assert after["pending"] == 0
    assert after["fitted_at"] is not None
    assert "no evidence awaits the next fit" in run("skills", "--config", config)
    judge(config, "sim_a", "c9", "7")
    assert "1 skill event awaits the next fit" in " ".join(
        run("skills", "--config", config).split()
    )
    done = json.loads(run("skill", "fit", "--config", config, "--json"))
    assert (done["ran"], done["fitted"], done["events"], done["pending"]) == (True, 1, 4, 0)
    assert done["fitted_at"] > after["fitted_at"]
    idle = json.loads(run("skill", "fit", "--config", config, "--json"))
    assert (idle["ran"], idle["fitted"], idle["seconds"]) == (False, 0, 0.0)
    assert idle["fitted_at"] == done["fitted_at"]
    assert "no evidence awaits the next fit" in run("skill", "fit", "--config", config)


def test_skill_judges_lists_the_sources_with_their_warnings(tmp_path: Path) -> None:
    """Before a fit: none, and what awaits. After: a lone judge, alone (its leniency cannot
    be learned), with its evidence and all of the scale."""
    config = str(config_file(tmp_path))
    for index in range(3):
        judge(config, "sim_a", f"a{index}", "6", "--judge", "gpt")
        judge(config, "sim_b", f"b{index}", "9", "--judge", "gpt")
    assert "No source of scores fitted yet" in run("skill", "judges", "--config", config)
    run("skill", "fit", "--config", config)
    listed = json.loads(run("skill", "judges", "--config", config, "--json"))
    assert listed["pending"] == 0
    (gpt,) = listed["judges"]
    assert (gpt["source"], gpt["observations"], gpt["share"]) == ("judge:gpt", 6, 1.0)
    assert gpt["warning"] == "alone: its leniency cannot be learned"
    assert [t["task_type"] for t in gpt["task_types"]] == ["qa"]
    table = " ".join(run("skill", "judges", "--config", config).split())
    assert "judge:gpt" in table
    assert "alone: its leniency cannot be learned" in table
    assert "100%" in table
