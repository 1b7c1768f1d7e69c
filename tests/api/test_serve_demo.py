"""`agentladder serve --demo`: the demo's agents served live on the demo's SQLite file."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
from typer.testing import CliRunner

from agentladder.cli import app
from agentladder.demo import DEMO_AGENTS, run_demo
from tests.served import start_serve

runner = CliRunner()


def test_serve_demo_has_the_demo_agents_online_and_runs_a_deliberation(tmp_path: Path) -> None:
    """After the demo, `serve --demo --db` shows its eight agents online; a deliberation
    started through the API runs, is ranked and judged, and joins the demo's records."""
    db = tmp_path / "demo.db"
    asyncio.run(run_demo(db, 3))
    server = start_serve(tmp_path, ["--demo", "--db", str(db)])
    try:
        listed = httpx.get(server.url("/agents"), timeout=10).json()["agents"]
        assert {a["name"]: a["status"] for a in listed} == {a[0]: "online" for a in DEMO_AGENTS}
        picker = httpx.get(server.url("/dashboard/deliberations/new"), timeout=10).text
        assert 'id="pick-atlas"' in picker
        record = server.settled(server.deliberate(["atlas", "borealis", "cirrus"]))
        assert record["status"] == "completed"
        assert set(record["scores"]) == {"atlas", "borealis", "cirrus"}
        assert all(score is not None for score in record["scores"].values())
        listing = httpx.get(server.url("/deliberations"), timeout=10).json()
        assert len(listing["deliberations"]) == 4  # the demo's three and this one
    finally:
        server.stop()


def test_serve_demo_without_the_demo_file_says_to_run_the_demo(short_path: Path) -> None:
    """`serve --demo` before `agentladder demo`: one line naming the file and the command,
    exit 1, and no file created."""
    missing = short_path / "none.db"
    result = runner.invoke(app, ["serve", "--demo", "--db", str(missing), "--port", "0"])
    assert result.exit_code == 1, result.output
    assert result.output.strip().splitlines() == [
        "error: --db: does not exist: run `make demo` (or `agentladder demo`) first"
        f" ({str(missing)!r})"
    ]
    assert not missing.exists()


def test_serve_demo_refuses_another_configuration(tmp_path: Path) -> None:
    """`serve --demo --config FILE` names the clash in one line, exit 1."""
    config = tmp_path / "c.yaml"
    config.write_text("agents: []\n", encoding="utf-8")
    result = runner.invoke(app, ["serve", "--demo", "--config", str(config), "--port", "0"])
    assert result.exit_code == 1, result.output
    line = result.output.strip()
    assert line.startswith("error: --demo: serves the demo's agents: give no --config")


def test_the_demo_ends_with_the_command_that_serves_it(tmp_path: Path) -> None:
    """`agentladder demo --db X` ends by printing `serve --demo --db X`."""
    db = tmp_path / "d.db"
    result = runner.invoke(app, ["demo", "--db", str(db), "--deliberations", "2"])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert f"serve --demo --db {db}`" in said
