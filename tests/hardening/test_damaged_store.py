"""A damaged SQLite file against a real `agentladder serve` on loopback: refused at start
in one line naming the file and how to check and restore it; served without the start-up
check, every request is answered (503 ``store_unavailable``, never a 500 or a reset) and
``/readyz`` says not ready."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx

from tests.served import free_port, start_server

CONFIG = """
agents:
  - name: sim_a
    backend: {kind: simulated, quality: 7.0}
"""
PAGE = 4096


def _damaged_copy(tmp_path: Path) -> Path:
    """A store with 300 judgments, then 600 bytes overwritten in each interior page."""
    server = start_server(tmp_path, CONFIG, db="good.db")
    try:
        with httpx.Client(timeout=10) as client:
            for n in range(300):
                body = {"agent_id": f"agent-{n % 30}", "contract_id": f"c-{n}", "score": 7.0,
                        "new_agent": True}  # fmt: skip
                assert client.post(server.url("/oracle/judgments"), json=body).status_code == 200
    finally:
        server.stop()
    with contextlib.closing(sqlite3.connect(tmp_path / "good.db")) as conn:
        found = conn.execute("SELECT pageno FROM dbstat WHERE name = 'sqlite_schema'")
        schema = {page for (page,) in found}  # page 1 and, as it grows, its leaves: kept
    data = bytearray((tmp_path / "good.db").read_bytes())
    pages = len(data) // PAGE
    assert pages > 10
    for page in range(2, pages):  # the schema kept whole: the file still opens
        if page + 1 in schema:  # dbstat counts pages from 1
            continue
        start = page * PAGE + 200
        data[start : start + 600] = b"\xa5" * 600
    damaged = tmp_path / "damaged.db"
    damaged.write_bytes(bytes(data))
    return damaged


def test_a_damaged_file_is_refused_at_start_then_served_as_unavailable(tmp_path: Path) -> None:
    """serve on the damaged copy exits 3 with one line naming the file, the check and the
    restore; with the start-up check skipped, 200 requests get no 500 and no reset, at
    least one 503 store_unavailable, and /readyz turns 503."""
    damaged = _damaged_copy(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "agentladder.cli", "serve", "--db", str(damaged),
         "--port", str(free_port())],
        check=False, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 3, output
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    assert str(damaged) in lines[0]
    assert "PRAGMA integrity_check" in lines[0]
    assert "backup" in lines[0]

    server = start_server(tmp_path, CONFIG, db="damaged.db", ready=False, extra=("--check-s", "0"))
    statuses: list[int] = []
    try:
        with httpx.Client(timeout=10) as client:
            for n in range(200):
                path = ("/oracle/leaderboard", f"/oracle/profiles/agent-{n % 30}", "/agents",
                        f"/oracle/profiles/agent-{n % 30}/history")[n % 4]  # fmt: skip
                statuses.append(client.get(server.url(path)).status_code)
                body = {"agent_id": f"agent-{n % 30}", "contract_id": f"d-{n}", "score": 7.0}
                judged = client.post(server.url("/oracle/judgments"), json=body)
                statuses.append(judged.status_code)
                if judged.status_code == 503:
                    assert judged.json()["error"]["code"] == "store_unavailable"
            ready = client.get(server.url("/readyz"))
    finally:
        server.stop()
    assert 500 not in statuses
    assert 503 in statuses
    assert ready.status_code == 503
    assert ready.json()["error"]["code"] == "store_unavailable"
