"""What counting the evidence that awaits the skill fit costs (``Store.count_skill_events``,
the ``pending`` of every skill answer: docs/skill.md, "Between two fits"), on SQLite and
on NATS, against reading the same events (``events_after``: what ``oracle verify`` did to
count them), in the same run.

A log of ``PENDING_LOG`` events (200,000 by default; judgments of 1,000 agents, their
states not written: the log alone is counted) is written through ``apply_skill_many``,
then counted and read after the seq of the last 10 events, the last 100,000 (or half of a
smaller log) and from the start. Medians of 5 counts and of 3 reads.

Run: ``.venv/bin/python -m benchmarks skill_pending`` (``PENDING_LOG=N`` for another log).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from pathlib import Path

from agentladder.domain.skill.state import AgentSkill, FleetSkill
from agentladder.natsserver import NatsServer
from agentladder.services.skill.fitting import events_after
from agentladder.store.base import SkillItem, Store
from agentladder.store.skills import SkillCommit, SkillEvent, SkillFold
from agentladder.store.url import open_store

RUNS = 5
READS = 3
CHUNK = 3_000
PAYLOAD = '{"kind":"judgment","key":"%s","at":1.0,"agent_id":"a%d","task_type":"qa","score":7.0}'


def _fold(key: str, agent: int) -> SkillFold:
    event = SkillEvent(key=key, kind="judgment", payload=PAYLOAD % (key, agent),
                       payload_hash="h", at=1.0)  # fmt: skip

    def fold(states: Mapping[str, AgentSkill], fleet: FleetSkill) -> SkillCommit:
        return SkillCommit(event, {}, None)

    return fold


async def _fill(store: Store, count: int) -> None:
    """``count`` events in the log."""
    for start in range(0, count, CHUNK):
        items: list[SkillItem] = [
            (f"judgment:a{i % 1000}:c{i}", (), _fold(f"judgment:a{i % 1000}:c{i}", i % 1000))
            for i in range(start, min(count, start + CHUNK))
        ]
        await store.apply_skill_many(items)


async def _median_ms(call: Callable[[], Awaitable[object]], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        await call()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


async def _measure(name: str, url: str, count: int) -> None:
    store = await open_store(url)
    try:
        started = time.perf_counter()
        await _fill(store, count)
        print(f"{name}: {count:,} events written in {time.perf_counter() - started:.1f} s")
        seqs = [e.seq for e in await store.skill_events(after=0, limit=1 << 30)]
        for back in (10, min(100_000, count // 2), count):
            after = seqs[-back - 1] if back < len(seqs) else 0
            counted = await store.count_skill_events(after=after)
            assert counted == back, (counted, back)
            count_ms = await _median_ms(partial(store.count_skill_events, after=after), RUNS)
            read_ms = await _median_ms(partial(events_after, store, after), READS)
            print(f"{name}: {back:,} of {count:,} pending: counted in {count_ms:.2f} ms,"
                  f" read in {read_ms:.1f} ms (ratio {read_ms / count_ms:.0f})")  # fmt: skip
    finally:
        await store.close()


def main() -> None:
    """SQLite, then NATS (a nats-server of its own, on tmpfs when there is one)."""
    count = int(os.environ.get("PENDING_LOG", "200000"))
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(_measure("sqlite", f"sqlite:///{Path(folder) / 'pending.db'}", count))
    shm = "/dev/shm" if Path("/dev/shm").is_dir() else None
    with tempfile.TemporaryDirectory(dir=shm) as folder, NatsServer(store_dir=folder) as server:
        asyncio.run(_measure("nats", f"{server.url}?prefix=bench", count))


if __name__ == "__main__":
    main()
