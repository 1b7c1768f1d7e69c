"""The command line: demo prints the specifications' examples; config check names bad fields."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentladder.cli import app

runner = CliRunner()


def test_demo_runs_deliberations_and_shows_ranks_and_xp(tmp_path: Path) -> None:
    """`agentladder demo` runs simulated deliberations into SQLite and prints both tables."""
    db = tmp_path / "demo.db"
    result = runner.invoke(app, ["demo", "--db", str(db), "--deliberations", "6"])
    assert result.exit_code == 0, result.output
    assert "Ranks after 6 deliberations" in result.output
    assert "XP leaderboard" in result.output
    assert "best at audit" in result.output
    assert "hidden quality" in result.output  # the skill table beside the truth
    said = "".join(result.output.split())  # rich wraps and folds long lines
    assert f"serve--demo--db{db}" in said
    assert db.exists()
    conn = sqlite3.connect(db)
    profiles = conn.execute("SELECT COUNT(*) FROM agent_profiles").fetchone()[0]
    records = conn.execute("SELECT COUNT(*) FROM deliberations").fetchone()[0]
    conn.close()
    assert profiles >= 4
    assert records == 6


def test_examples_prints_the_worked_examples() -> None:
    """`agentladder examples` shows the promotions, the cost and the 35 XP award."""
    result = runner.invoke(app, ["examples"])
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


def test_config_check_prints_one_line_with_the_closest_key(tmp_path: Path) -> None:
    """A misspelt agent field is one line: its path, unknown key, the closest key, the value."""
    path = tmp_path / "c.yaml"
    path.write_text("agents:\n  - name: a1\n    capabilty_tags: [audit]\n")
    result = runner.invoke(app, ["config", "check", str(path)])
    assert result.exit_code == 1
    assert result.output == (
        "error: agents[a1].capabilty_tags: unknown key (did you mean capability_tags?)"
        " (['audit'])\n"
    )


@pytest.mark.parametrize(
    "store", ["postgres://db/x", "nats://127.0.0.1:4222?prefix=no.dots", "sqlite://relative.db"]
)
def test_config_check_refuses_a_store_url_no_store_opens(tmp_path: Path, store: str) -> None:
    """config check parses the store URL (without connecting) and names it when unusable."""
    path = tmp_path / "c.yaml"
    path.write_text(f"store: '{store}'\n")
    result = runner.invoke(app, ["config", "check", str(path)])
    assert result.exit_code == 1
    assert result.output.startswith("error: store: ")
    assert len(result.output.splitlines()) == 1


def test_config_check_accepts_a_nats_store_without_connecting(tmp_path: Path) -> None:
    """A well-formed NATS URL passes config check though no server listens there."""
    path = tmp_path / "c.yaml"
    path.write_text("store: nats://127.0.0.1:1\n")
    result = runner.invoke(app, ["config", "check", str(path)])
    assert result.exit_code == 0, result.output


def test_serve_refuses_a_store_named_twice(tmp_path: Path) -> None:
    """`serve --db FILE --store URL` names the store twice: exit 2, nothing served."""
    result = runner.invoke(
        app, ["serve", "--db", str(tmp_path / "a.db"), "--store", "memory://", "--port", "0"]
    )
    assert result.exit_code == 2
    assert "--db and --store name the store twice" in result.output
    assert not (tmp_path / "a.db").exists()
