"""A SQLite file deleted or replaced under a real `agentladder serve` on loopback: the next
write is 503 ``store_unavailable`` (nothing more is acknowledged), ``/readyz`` turns not
ready, reads go on, and what the old file held is saved beside it; after a restart,
``serve`` refuses to put an empty store in place of the deleted one (one line, exit 3)
unless asked with ``--create``, and serves a replacement without replaying the old
file's WAL into it."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx

from agentladder.store.sqlite.identity import marker_path
from tests.served import Server, free_port, start_serve, start_server

CONFIG = """
agents:
  - name: sim_a
    backend: {kind: simulated, quality: 7.0}
"""


def _judge(server: Server, client: httpx.Client, start: int, count: int) -> list[httpx.Response]:
    """``count`` new judgments of ten agents, contracts ``c-start`` on."""
    return [
        client.post(
            server.url("/oracle/judgments"),
            json={
                "agent_id": f"agent-{n % 10}",
                "contract_id": f"c-{n}",
                "score": 7.0,
                "new_agent": True,
            },
        )
        for n in range(start, start + count)
    ]


def _serve_once(*args: str) -> tuple[int, str]:
    """`agentladder serve ARGS` expected to exit at start: its code and output."""
    done = subprocess.run(
        [sys.executable, "-m", "agentladder.cli", "serve", *args, "--port", str(free_port())],
        check=False, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr


def _judged(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM oracle_events").fetchone()[0])
    finally:
        conn.close()


def test_a_deleted_file_refuses_writes_and_is_not_replaced_by_an_empty_one(
    tmp_path: Path,
) -> None:
    """50 judgments stored; the file deleted: the next 50 are each 503 store_unavailable
    naming the file, /readyz 503, reads 200, the 50 saved in FILE.rescued-TIME (named in
    the error) and the old -wal gone; its stop says so in lines, without a traceback;
    after the stop, serve exits 3 in one line naming the file, the marker and --create,
    creating nothing; with --create it serves an empty store."""
    db = tmp_path / "served.db"
    server = start_server(tmp_path, CONFIG, db=db.name)
    try:
        assert marker_path(db).is_file()  # written when serve created the file
        with httpx.Client(timeout=10) as client:
            assert [r.status_code for r in _judge(server, client, 0, 50)] == [200] * 50
            db.unlink()
            after = _judge(server, client, 50, 50)
            assert [r.status_code for r in after] == [503] * 50
            for answer in after:
                error = answer.json()["error"]
                assert error["code"] == "store_unavailable"
                assert str(db) in error["message"]
                assert "deleted or moved" in error["message"]
            ready = client.get(server.url("/readyz"))
            board = client.get(server.url("/oracle/leaderboard"))
    finally:
        stopped = server.stop()
    assert "Traceback" not in stopped, stopped[-3000:]
    assert "is left to run out: the SQLite file" in stopped
    assert ready.status_code == 503
    assert "deleted or moved" in ready.json()["error"]["message"]
    assert board.status_code == 200
    assert len(board.json()["entries"]) == 10
    (rescued,) = tmp_path.glob("served.db.rescued-*")  # what it held, saved at the first 503
    assert str(rescued) in after[-1].json()["error"]["message"]
    assert _judged(rescued) == 50
    assert not Path(f"{db}-wal").exists()  # never to be replayed into another file there

    code, output = _serve_once("--config", str(tmp_path / "agents.yaml"), "--db", str(db))
    lines = [line for line in output.splitlines() if line.strip()]
    assert code == 3, output
    assert len(lines) == 1, output
    assert str(db) in lines[0]
    assert str(marker_path(db)) in lines[0]
    assert "--create" in lines[0]
    assert not db.exists()

    fresh = start_serve(
        tmp_path, ["--config", str(tmp_path / "agents.yaml"), "--db", str(db), "--create"]
    )
    try:
        board = httpx.get(fresh.url("/oracle/leaderboard"), timeout=10)
        stored = httpx.post(
            fresh.url("/oracle/judgments"),
            json={"agent_id": "agent-0", "contract_id": "new", "score": 7.0, "new_agent": True},
            timeout=10,
        )
    finally:
        fresh.stop()
    assert board.json()["entries"] == []
    assert stored.status_code == 200
    assert json.loads(marker_path(db).read_text())["file"] == str(db.resolve())


def test_a_replaced_file_refuses_writes_and_the_replacement_is_served_after_a_restart(
    tmp_path: Path,
) -> None:
    """20 judgments; the file replaced (by a consistent copy of itself, a new inode): the
    next write is 503 store_unavailable saying it was replaced, /readyz 503, the old file
    saved beside it; restarted, serve serves the file now at the path, holding the 20 (the
    old file's WAL, which held a 21st, is not replayed into it)."""
    db = tmp_path / "served.db"
    server = start_server(tmp_path, CONFIG, db=db.name)
    try:
        with httpx.Client(timeout=10) as client:
            assert [r.status_code for r in _judge(server, client, 0, 20)] == [200] * 20
            copy = tmp_path / "copy.db"
            source, target = sqlite3.connect(db), sqlite3.connect(copy)
            source.backup(target)
            source.close()
            target.close()
            os.replace(copy, db)
            refused = _judge(server, client, 20, 5)
            ready = client.get(server.url("/readyz"))
    finally:
        server.stop()
    assert [r.status_code for r in refused] == [503] * 5
    assert "replaced by another file" in refused[0].json()["error"]["message"]
    assert ready.status_code == 503
    assert _judged(db) == 20
    (rescued,) = tmp_path.glob("served.db.rescued-*")
    assert 20 <= _judged(rescued) <= 21  # and the one refused after its commit, if so

    again = start_serve(tmp_path, ["--config", str(tmp_path / "agents.yaml"), "--db", str(db)])
    try:
        with httpx.Client(timeout=10) as client:
            more = _judge(again, client, 20, 5)
            assert client.get(again.url("/readyz")).status_code == 200
    finally:
        again.stop()
    assert [r.status_code for r in more] == [200] * 5
    assert _judged(db) == 25


def test_a_store_without_a_marker_gets_one_and_a_first_start_needs_no_flag(
    tmp_path: Path,
) -> None:
    """A file stored before markers existed is marked when served; `serve` on a path where
    nothing ever was creates the store, no flag needed (the README's first start)."""
    old = tmp_path / "old.db"
    conn = sqlite3.connect(old)
    conn.execute("CREATE TABLE kept (x)")
    conn.close()
    server = start_server(tmp_path, CONFIG, db=old.name)
    server.stop()
    assert marker_path(old).is_file()
    assert not marker_path(tmp_path / "new.db").exists()
    first = start_server(tmp_path, CONFIG, db="new.db")
    first.stop()
    assert (tmp_path / "new.db").is_file()
    assert marker_path(tmp_path / "new.db").is_file()


def test_import_and_judge_do_not_recreate_a_vanished_store_unless_asked(tmp_path: Path) -> None:
    """`import` into a SQLite file that vanished (its marker there) is one line, exit 1,
    creating nothing; with --create it imports into a new store; `judge --create` too."""
    db = tmp_path / "history.db"
    lines = tmp_path / "h.jsonl"
    lines.write_text(json.dumps({"agent_id": "a1", "contract_id": "c1", "score": 7}) + "\n")
    command = [sys.executable, "-m", "agentladder.cli", "import", str(lines), "--db", str(db)]
    first = subprocess.run(command, check=False, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    db.unlink()
    refused = subprocess.run(command, check=False, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 1
    assert refused.stdout == ""
    (line,) = refused.stderr.strip().splitlines()
    assert str(marker_path(db)) in line
    assert "--create" in line
    assert not db.exists()
    again = subprocess.run([*command, "--create"], check=False, capture_output=True, text=True,
                           timeout=120)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert _judged(db) == 1
    db.unlink()
    judge = [sys.executable, "-m", "agentladder.cli", "judge", "--agent-id", "a1",
             "--contract-id", "c2", "--score", "7", "--db", str(db)]  # fmt: skip
    assert subprocess.run(judge, check=False, capture_output=True, timeout=120).returncode == 1
    done = subprocess.run([*judge, "--create"], check=False, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert _judged(db) == 1
