"""A configuration file's relative SQLite store, as the data commands open it."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentladder.cli import app

runner = CliRunner()


def test_a_relative_sqlite_store_is_the_file_beside_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """judge --config conf/agents.yaml (store: sqlite:///ladder.db) run from another folder
    writes conf/ladder.db, and profile run from a third folder reads the same XP back."""
    folder = tmp_path / "conf"
    folder.mkdir()
    config = folder / "agents.yaml"
    config.write_text(
        "store: sqlite:///ladder.db\nagents:\n  - name: sim_a\n"
        "    backend: {kind: simulated, quality: 6.0}\n",
        encoding="utf-8",
    )
    first = tmp_path / "first"
    first.mkdir()
    monkeypatch.chdir(first)
    judged = runner.invoke(app, ["judge", "--config", "../conf/agents.yaml", "--agent-id",
                                 "sim_a", "--contract-id", "c1", "--score", "8.5",
                                 "--create"])  # fmt: skip
    assert judged.exit_code == 0, judged.output
    assert (folder / "ladder.db").is_file()
    assert not (first / "ladder.db").exists()
    monkeypatch.chdir(tmp_path)
    shown = runner.invoke(app, ["profile", "sim_a", "--config", str(config), "--json"])
    assert shown.exit_code == 0, shown.output
    assert '"xp": 40' in shown.output or '"xp":40' in shown.output.replace(" ", "")
