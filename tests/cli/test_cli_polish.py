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


def test_profile_shows_skill_and_probation(tmp_path: Path) -> None:
    """profile shows the agent's skill as skills computes it, and a failed judgment's
    probation (of a reliable agent: a rookie's every task is validated anyway) with the
    passes it still needs; an agent in good standing shows none."""
    db = tmp_path / "p.db"
    for number in range(3):  # 130 XP: reliable, overall and at audit
        judge(db, "sim_a", f"c{number}", "--score", "9.5", "--task-type", "audit")
    judge(db, "sim_a", "c9", "--failed", "--task-type", "audit")
    judge(db, "sim_b", "c1", "--score", "9")
    board = json.loads(ok("skills", "--db", str(db), "--json"))["entries"]
    skill = {e["agent_id"]: e for e in board}["sim_a"]
    shown = ok("profile", "sim_a", "--db", str(db))
    assert (f"  skill: {skill['skill']:.2f} (95% {skill['low']:.2f}-{skill['high']:.2f},"
            f" {skill['observations']} observations") in shown  # fmt: skip
    assert "    at audit: " in shown
    assert "  probation (overall): since a failed judgment" in shown
    found = re.search(r"^  probation \(audit\): since a failed judgment, every task validated;"
                      r" (\d+) passed validations to go$", shown, re.M)  # fmt: skip
    assert found is not None, shown
    assert int(found.group(1)) > 0
    assert "  probation: none" in ok("profile", "sim_b", "--db", str(db))


PRICED = """
agents:
  - name: sim_a
    input_price_per_mtok: 2.5
    output_price_per_mtok: 10
    backend: {kind: simulated, quality: 6.0}
  - name: sim_b
    input_price_per_mtok: 0.001
    output_price_per_mtok: 0.002
    backend: {kind: simulated, quality: 9.0}
"""


def test_costs_are_printed_in_dollars(tmp_path: Path) -> None:
    """agents, route, profile, config check and examples print costs with `$`; a tiny cost
    per round shows its digits, not $0.0000."""
    config = tmp_path / "agents.yaml"
    config.write_text(PRICED, encoding="utf-8")
    db = tmp_path / "c.db"
    ok("judge", "--config", str(config), "--db", str(db), "--agent-id", "sim_a",
       "--contract-id", "c1", "--score", "8", "--cost", "0.05", "--create")  # fmt: skip
    ok("judge", "--config", str(config), "--db", str(db), "--agent-id", "sim_b",
       "--contract-id", "c1", "--score", "7")  # fmt: skip
    agents = ok("agents", "--config", str(config), "--db", str(db))
    assert "$0.0250" in agents
    assert "$0.0000070" in agents  # 4,000 in + 1,500 out tokens at $0.001/$0.002 per Mtok
    assert "0.0000 " not in agents
    route = ok("route", "--task-type", "general", "--config", str(config), "--db", str(db))
    assert "$0.0250" in route
    assert "total cost $0.0500" in ok("profile", "sim_a", "--config", str(config), "--db", str(db))
    assert "$0.0250 per round" in ok("config", "check", str(config))
    assert "$0.0250 per round" in ok("examples")


def table_column(output: str, index: int, key: int = 0) -> list[str]:
    """The cells of column ``index`` of a rich table, a cell folded onto several lines
    joined back (a new row starts where column ``key`` is not empty)."""
    cells: list[str] = []
    for line in output.splitlines():
        if not line.startswith("│"):
            continue
        parts = [part.strip() for part in line.strip().strip("│").split("│")]
        if parts[key]:
            cells.append(parts[index])
        else:
            cells[-1] += parts[index]
    return cells


def _labels(output: str) -> list[str]:
    header = [line.strip().strip("┃").split("┃") for line in output.splitlines()
              if line.startswith("┃")]  # fmt: skip
    return ["".join(cell.strip() for cell in cells) for cells in zip(*header, strict=True)]


def test_skills_shows_long_ids_whole_and_labels_every_column(tmp_path: Path) -> None:
    """Two 46-character ids that differ at their end, one judged 12 times (settled) and
    one once (provisional): at 80 columns the settled one is in a table of tiers and the
    provisional one under its own heading, each id whole (folded, never cut to the same
    text), every column labelled."""
    db = tmp_path / "s.db"
    ids = ["team-alpha.openai.gpt-4o-mini-2024-07-18.eval-1",
           "team-alpha.openai.gpt-4o-mini-2024-07-18.eval-2"]  # fmt: skip
    for number, score in enumerate([2, 9, 4, 10, 3, 8] * 2):
        judge(db, ids[0], f"c{number}", "--score", str(score))
    judge(db, ids[1], "c0", "--score", "6")
    shown = ok("skills", "--db", str(db))
    settled, provisional = shown.split("Provisional overall: too little evidence for a tier")
    assert "tier 1: not separated from the best among settled agents" in " ".join(settled.split())
    assert _labels(settled) == ["tier", "agent", "skill", "interval", "sd", "observations"]
    assert table_column(settled, 1) == ids[:1]
    assert table_column(settled, 0) == ["1"]
    assert _labels(provisional) == ["agent", "skill", "interval", "sd", "observations"]
    assert table_column(provisional, 0, key=1) == ids[1:]


def test_an_empty_store_prints_what_to_run_first() -> None:
    """agents, leaderboard and skills on an empty store print one hint naming the commands
    that fill it, not an empty table; --json stays an empty list."""
    for command, start in [("agents", "No agents in this store yet"),
                           ("leaderboard", "Nobody has been judged yet"),
                           ("skills", "No skill evidence yet")]:  # fmt: skip
        shown = " ".join(ok(command, "--store", "memory://").split())
        assert shown.startswith(start), shown
        assert "`agentladder judge`" in shown
        assert "`agentladder import`" in shown
        assert "make demo" in shown
    board = json.loads(ok("leaderboard", "--store", "memory://", "--json"))
    assert board == {"entries": []}
