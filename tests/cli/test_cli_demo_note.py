"""`agentladder demo` explains what rank and XP mean beside skill."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from agentladder.cli import app

runner = CliRunner()


def test_the_demo_says_what_rank_and_xp_mean_beside_skill(tmp_path: Path) -> None:
    """After the tables the demo says that rank is floor-based and never goes down (with
    the range of ranks it printed), that XP is positive-only, and to compare by skill."""
    result = runner.invoke(app, ["demo", "--db", str(tmp_path / "d.db"), "--deliberations", "8"])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    ranks = [int(m) for m in re.findall(r"│ \w+ +│ (\d+) +│ \d+ +│ \d+\.\d\d +│", result.output)]
    assert len(ranks) == 8, result.output
    assert f"Rank ({min(ranks)} to {max(ranks)} here) is the seed's floor-based promotion" in said
    assert "rank never goes down" in said
    assert "not how good it is" in said
    assert "positive-only ladder" in said
    assert "To compare agents, read skill" in said
