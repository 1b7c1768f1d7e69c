"""The SQLite file made read-only under a real `agentladder serve` on loopback, then
writable again: meanwhile writes are 503 ``store_unavailable`` saying so, reads answer
what was stored, ``/readyz`` is 503; afterwards writes and readiness come back by
themselves, and nothing acknowledged is lost.

Read-only is ``chattr +i`` when the tests run as root (root writes through any mode bits;
the immutable flag stops even root), else the file's write bits taken away: both are what
``access(W_OK)`` answers for this process, which the store checks before every write
transaction. The open connections could still write (permissions are checked at open),
so without that check the writes went on into the WAL, acknowledged.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agentladder.config import parse_settings
from agentladder.services.oracle.verify import verify_store
from agentladder.store.url import open_store
from tests.served import Server, start_server

CONFIG = """
agents:
  - name: sim_a
    backend: {kind: simulated, quality: 7.0}
"""


def _set_read_only(path: Path, read_only: bool) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i" if read_only else "-i", str(path)], check=True)
    else:
        path.chmod(0o444 if read_only else 0o644)


@pytest.fixture
def locked(tmp_path: Path) -> Iterator[list[Path]]:
    """Files made read-only by the test, made writable again whatever happens."""
    paths: list[Path] = []
    yield paths
    for path in paths:
        _set_read_only(path, False)


def _judge(server: Server, client: httpx.Client, numbers: range) -> list[httpx.Response]:
    return [
        client.post(
            server.url("/oracle/judgments"),
            json={
                "agent_id": f"agent-{n % 5}",
                "contract_id": f"c-{n}",
                "score": 6.5,
                "new_agent": True,
            },
        )
        for n in numbers
    ]


def _reads(server: Server, client: httpx.Client) -> list[object]:
    board = client.get(server.url("/oracle/leaderboard"))
    profile = client.get(server.url("/oracle/profiles/agent-0"))
    assert board.status_code == profile.status_code == 200
    return [board.json(), profile.json()]


def test_a_file_made_read_only_refuses_writes_until_it_is_writable_again(
    tmp_path: Path, locked: list[Path]
) -> None:
    """30 judgments; read-only: 20 writes each 503 store_unavailable naming the file and
    'read-only', the leaderboard and a profile read as before, /readyz 503; writable again:
    /readyz 200 and 20 more judgments stored; every acknowledged one stored once, and the
    replay of the events equals the stored profiles."""
    db = tmp_path / "served.db"
    server = start_server(tmp_path, CONFIG, db=db.name)
    acknowledged: set[str] = set()
    try:
        with httpx.Client(timeout=10) as client:
            first = _judge(server, client, range(30))
            assert [r.status_code for r in first] == [200] * 30
            acknowledged |= {f"c-{n}" for n in range(30)}
            before = _reads(server, client)
            locked.append(db)
            _set_read_only(db, True)
            refused = _judge(server, client, range(30, 50))
            during = _reads(server, client)
            unready = client.get(server.url("/readyz"))
            _set_read_only(db, False)
            locked.clear()
            ready = client.get(server.url("/readyz"))
            later = _judge(server, client, range(30, 50))
            acknowledged |= {f"c-{n}" for n, r in zip(range(30, 50), later, strict=True)
                             if r.status_code == 200}  # fmt: skip
    finally:
        server.stop()
    assert [r.status_code for r in refused] == [503] * 20
    for answer in refused:
        error = answer.json()["error"]
        assert error["code"] == "store_unavailable"
        assert str(db) in error["message"]
        assert "read-only" in error["message"]
    assert during == before
    assert unready.status_code == 503
    assert "read-only" in unready.json()["error"]["message"]
    assert ready.status_code == 200
    assert [r.status_code for r in later] == [200] * 20
    assert [r.json()["duplicate"] for r in later] == [False] * 20  # none applied while refused

    async def stored() -> tuple[set[str], bool]:
        store = await open_store(f"sqlite:///{db}")
        try:
            keys = [e.key for agent in range(5) for e in await store.events(f"agent-{agent}")]
            settings = parse_settings(None)
            report = await verify_store(store, settings.oracle, settings.skill)
        finally:
            await store.close()
        assert len(keys) == len(set(keys))
        return {key.removeprefix("judgment:") for key in keys}, report.ok

    keys, replayed = asyncio.run(stored())
    assert keys == acknowledged
    assert replayed
