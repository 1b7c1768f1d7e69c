"""The command line: demo prints the specifications' examples; config check names bad fields."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from agentladder.cli import app

runner = CliRunner()


def test_demo_prints_the_worked_examples() -> None:
    """`agentladder demo` exits 0 and shows the promotions, the cost and the 35 XP award."""
    result = runner.invoke(app, ["demo"])
    assert result.exit_code == 0, result.output
    assert "promoted B (highest_score)" in result.output
    assert "floor rank 1, floor group A, B, promoted A" in result.output
    assert "0.0250 per round" in result.output
    assert "XP awarded: 35" in result.output


def test_config_check_accepts_a_good_file(tmp_path: Path) -> None:
    """A valid config is summarized with each agent's cost per round."""
    path = tmp_path / "c.yaml"
    path.write_text(
        "agents:\n  - name: a1\n    input_price_per_mtok: 2.5\n    output_price_per_mtok: 10\n"
    )
    result = runner.invoke(app, ["config", "check", str(path)])
    assert result.exit_code == 0, result.output
    assert "a1" in result.output
    assert "0.0250" in result.output


def test_config_check_names_the_bad_field(tmp_path: Path) -> None:
    """A negative price fails with exit 1 and names the field and the value."""
    path = tmp_path / "c.yaml"
    path.write_text("agents:\n  - name: a1\n    input_price_per_mtok: -3\n")
    result = runner.invoke(app, ["config", "check", str(path)])
    assert result.exit_code == 1
    assert "input_price_per_mtok" in result.output
    assert "-3" in result.output
