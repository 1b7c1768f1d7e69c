"""Two OS processes on one store, and a process killed with SIGKILL mid-stream.

Run on both persistent backends: a SQLite file and a real NATS JetStream server.
"""

from __future__ import annotations

import asyncio
import random
import signal
import time
from pathlib import Path

import pytest

from agentladder.store.url import open_store
from tests.store.processes import acked, assert_consistent, start_worker

AWARDS = 120


@pytest.fixture(params=["sqlite", "nats"])
def shared_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store two OS processes can share: a SQLite file, or a NATS server."""
    if request.param == "nats":
        return str(request.getfixturevalue("nats_store_url"))
    return f"sqlite:///{tmp_path / 'shared.db'}"


def test_two_processes_awarding_the_same_agent_lose_nothing(shared_url: str) -> None:
    """Two processes each apply 120 awards to one agent: 240 events, profile == replay."""
    url = shared_url
    workers = [start_worker(url, "shared", prefix, AWARDS) for prefix in ("p1", "p2")]
    outputs = [w.communicate(timeout=240) for w in workers]
    assert [w.returncode for w in workers] == [0, 0], [err for _, err in outputs]
    assert [len(acked(out)) for out, _ in outputs] == [AWARDS, AWARDS]

    async def check() -> None:
        store = await open_store(url)
        try:
            assert await assert_consistent(store, "shared") == 2 * AWARDS
            keys = {e.key for e in await store.events("shared")}
            assert keys == {f"{p}-{i}" for p in ("p1", "p2") for i in range(AWARDS)}
        finally:
            await store.close()

    asyncio.run(check())


def test_sigkill_mid_stream_loses_no_acknowledged_award(shared_url: str) -> None:
    """A process killed at a random moment: every ACKed award is stored, none half-applied."""
    url = shared_url
    rng = random.Random()
    worker = start_worker(url, "victim", "k", 100_000)
    assert worker.stdout is not None
    while not (line := worker.stdout.readline()).startswith("ACK"):
        assert line, worker.stderr.read() if worker.stderr else "worker ended"
    time.sleep(rng.uniform(0.2, 1.5))
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=30)
    # The rest through the same reader: ``readline`` may have buffered further ACK lines,
    # which ``communicate`` (reading the raw pipe) would never see.
    rest = worker.stdout.read()
    worker.stdout.close()
    if worker.stderr is not None:
        worker.stderr.close()
    acknowledged = [line[4:].strip(), *acked(rest)]
    assert worker.returncode == -signal.SIGKILL

    async def check() -> None:
        store = await open_store(url)
        try:
            count = await assert_consistent(store, "victim")
            keys = {e.key for e in await store.events("victim")}
            assert set(acknowledged) <= keys
            assert count - len(acknowledged) in (0, 1)  # at most the one in flight
        finally:
            await store.close()

    asyncio.run(check())
