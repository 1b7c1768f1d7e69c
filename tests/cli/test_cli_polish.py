"""The command line's figures agree with the store: judge's XP and total, profile's
probation and skill, costs in dollars, the skills table's ids and labels, hints on an
empty store."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from agentladder.cli import app

runner = CliRunner()


def ok(*args: str) -> str:
    """Run the command; it must succeed; its stdout."""
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def judge(db: Path, agent: str, contract: str, *extra: str) -> str:
    return ok("judge", "--db", str(db), "--agent-id", agent, "--contract-id", contract,
              "--new-agent", "--create", *extra)  # fmt: skip


def test_judge_prints_what_it_earned_and_the_new_total_as_the_profile_says(
    tmp_path: Path,
) -> None:
    """A first judgment that unlocks an achievement: judge prints +total_xp (task plus
    achievement XP) and the new total, both equal to the profile's and the answer's
    figures; a second adds to the total; a repeat adds nothing and says so."""
    db = tmp_path / "j.db"
    first = judge(db, "sim_a", "c1", "--score", "8.5", "--retries", "1", "--cost", "0.05",
                  "--budget", "0.1")  # fmt: skip
    answer = json.loads(judge(db, "sim_b", "c1", "--score", "8.5", "--retries", "1", "--cost",
                              "0.05", "--budget", "0.1", "--json"))  # fmt: skip
    assert answer["total_xp"] > answer["xp_awarded"]  # an achievement paid too
    profile = json.loads(ok("profile", "sim_a", "--db", str(db), "--json"))
    head = first.splitlines()[0]
    assert head == (
        f"sim_a: +{answer['total_xp']} XP (task {answer['xp_awarded']}, achievements"
        f" {answer['total_xp'] - answer['xp_awarded']}); total now {profile['xp']} XP,"
        f" {profile['level']}"
    )
    assert profile["xp"] == answer["total_xp"]
    earned = [int(n) for n in re.findall(r": \+(\d+)$", first, re.M)]
    assert sum(earned) == answer["total_xp"]  # the itemized lines add up to the +N
    second = judge(db, "sim_a", "c2", "--score", "6").splitlines()[0]
    later = json.loads(ok("profile", "sim_a", "--db", str(db), "--json"))
    after, level = later["xp"], later["level"]
    gained = after - profile["xp"]
    assert second == f"sim_a: +{gained} XP; total now {after} XP, {level}"
    again = judge(db, "sim_a", "c2", "--score", "6").splitlines()[0]
    assert again == (f"sim_a: duplicate of contract c2: its first judgment earned +{gained} XP,"
                     f" nothing added; total now {after} XP, {level}")  # fmt: skip
