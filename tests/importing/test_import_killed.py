"""An import killed with SIGKILL in the middle: the re-run finishes it, nothing counted
twice (events, ledger lines, skill evidence), and the replay equals the stored state."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

LINES = 20_000
AGENTS = 500


def _counts(db: Path) -> tuple[int, int, int]:
    """(Oracle events, ledger lines, skill events) as committed now."""
    if not db.exists():
        return 0, 0, 0
    conn = sqlite3.connect(db, timeout=30)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        if "skill_events" not in tables:
            return 0, 0, 0
        return (
            conn.execute("SELECT COUNT(*) FROM oracle_events").fetchone()[0],
            conn.execute("SELECT COUNT(*) FROM xp_history").fetchone()[0],
            conn.execute("SELECT COUNT(*) FROM skill_events").fetchone()[0],
        )
    finally:
        conn.close()


def _lines_of_events(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return sum(len(json.loads(r[0])) for r in conn.execute("SELECT lines FROM oracle_events"))
    finally:
        conn.close()


def _command(path: Path, db: Path) -> list[str]:
    return [sys.executable, "-c", "from agentladder.cli import main; main()", "import",
            str(path), "--db", str(db), "--json"]  # fmt: skip


@pytest.mark.slow
def test_a_killed_import_is_finished_by_a_rerun_with_nothing_twice(tmp_path: Path) -> None:
    """SIGKILL once some batches are committed; the re-run imports exactly the rest and
    counts the others duplicate; every key once; `oracle verify` passes."""
    path = tmp_path / "history.jsonl"
    with path.open("w") as out:
        for i in range(LINES):
            line = {"agent_id": f"agent-{i % AGENTS}", "contract_id": f"c-{i}",
                    "task_type": ("sql", "code", "docs")[i % 3], "score": (i * 7) % 11,
                    "success": i % 5 != 0, "cost": 0.01, "budget": 0.02}  # fmt: skip
            out.write(json.dumps(line) + "\n")
    db = tmp_path / "x.db"
    first = subprocess.Popen(
        _command(path, db), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        while _counts(db)[0] < 2000 and first.poll() is None:
            time.sleep(0.02)
        os.kill(first.pid, signal.SIGKILL)
    finally:
        first.wait()
    assert first.returncode == -signal.SIGKILL
    events, _, _ = _counts(db)
    assert 2000 <= events < LINES
    rerun = subprocess.run(_command(path, db), capture_output=True, text=True, check=False)
    assert rerun.returncode == 0, rerun.stderr
    summary = json.loads(rerun.stdout)
    assert summary["duplicate"] == events
    assert summary["imported"] == LINES - events
    assert (summary["conflicting"], summary["refused"]) == (0, 0)
    oracle_events, ledger_lines, skill_events = _counts(db)
    assert oracle_events == LINES
    assert skill_events == LINES
    assert ledger_lines == _lines_of_events(db)
    verified = subprocess.run(
        [sys.executable, "-c", "from agentladder.cli import main; main()", "oracle", "verify",
         "--store", f"sqlite:///{db}", "--json"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert verified.returncode == 0, verified.stdout + verified.stderr
    report = json.loads(verified.stdout)
    assert report["events_replayed"] == LINES
    assert report["skill_events_replayed"] == LINES
