"""NATS: a recovery pass's look for open deliberations, against reading every record.

One nats-server (JetStream on this machine's disk), one NATS store. The bucket is filled
with ``RECORDS`` completed deliberation records (a body of about 3 KB each: five agents,
two rounds of proposals, as the orchestrator stores them) and 10 open ones. Then,
``PASSES`` times: 50 deliberations written as a running one is (queued, then running,
then settling, then completed for 40 of them), and one look for the open ones, timed
(``list_deliberations`` with the open statuses: what ``recovery._unsettled`` asks; the
store keeps those records apart and reads what was written since its last look), beside
the same listing by reading every record (``list_deliberations`` with those statuses
and ``completed`` too, which the store answers the way it answered every listing
before: one ordered consumer over the whole bucket), its result filtered to the open
ones and checked equal. Medians of the passes; the first look (which reads the bucket
once, at an instance's start) apart.

Run: ``.venv/bin/python -m benchmarks nats_open_records``; ``AGENTLADDER_OPEN_RECORDS``
(default 20000) and ``AGENTLADDER_OPEN_PASSES`` (default 5) change the sizes.
Figures: ``docs/benchmarks.md``.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from typing import Any

from agentladder.natsserver import NatsServer
from agentladder.store.base import Store
from agentladder.store.records import OPEN_STATUSES, DeliberationDoc
from agentladder.store.url import open_store

RECORDS = int(os.environ.get("AGENTLADDER_OPEN_RECORDS", "20000"))
PASSES = int(os.environ.get("AGENTLADDER_OPEN_PASSES", "5"))
OPEN = sorted(OPEN_STATUSES)


def _body(n: int) -> dict[str, Any]:
    agents = [f"agent-{(n + k) % 50}" for k in range(5)]
    proposals = [
        {"agent_id": a, "content": "x" * 200, "aggregated_score": 7.0, "latency_ms": 120.0}
        for a in agents
    ]
    return {"agents": agents, "rounds": [{"proposals": proposals}] * 2, "request": {"q": n}}


def _doc(n: int, status: str) -> DeliberationDoc:
    return DeliberationDoc(id=f"d{n}", status=status, created_at=float(n), body=_body(n))


async def _fill(store: Store) -> None:
    for start in range(0, RECORDS, 500):
        await asyncio.gather(
            *(store.put_deliberation(_doc(n, "completed")) for n in range(start, start + 500))
        )
    for n in range(RECORDS, RECORDS + 10):
        await store.put_deliberation(_doc(n, "running"))


async def _timed(store: Store, statuses: list[str]) -> tuple[float, list[str]]:
    start = time.perf_counter()
    docs = await store.list_deliberations(limit=10**9, offset=0, statuses=statuses)
    return time.perf_counter() - start, [d.id for d in docs if d.status in OPEN_STATUSES]


async def _run(url: str) -> None:
    store = await open_store(url)
    try:
        started = time.perf_counter()
        await _fill(store)
        print(f"  {RECORDS:,} completed and 10 open records written in", end="")
        print(f" {time.perf_counter() - started:.1f} s")
        first, _ = await _timed(store, OPEN)
        print(f"  first look (the whole bucket, once): {first * 1000:.0f} ms")
        kept: list[float] = []
        every: list[float] = []
        next_id = RECORDS + 10
        for _ in range(PASSES):
            for n in range(next_id, next_id + 50):
                for status in ("queued", "running", "settling"):
                    await store.put_deliberation(_doc(n, status))
                if n % 5:
                    await store.put_deliberation(_doc(n, "completed"))
            next_id += 50
            took, found = await _timed(store, OPEN)
            took_all, all_found = await _timed(store, [*OPEN, "completed"])
            assert found == all_found, "the kept open records differ from a full read"
            kept.append(took)
            every.append(took_all)
        k, e = statistics.median(kept), statistics.median(every)
        print(f"  look for open records, median of {PASSES}: {k * 1000:.1f} ms")
        print(f"  reading every record (as before), median of {PASSES}: {e * 1000:.0f} ms")
        print(f"  ratio: {k / e:.4f} of the time ({e / k:.0f} times less)")
    finally:
        await store.close()


def main() -> None:
    """Fill a bucket, then time the two ways of finding its open records."""
    with NatsServer() as server:
        asyncio.run(_run(f"{server.url}?prefix=openbench"))


if __name__ == "__main__":
    main()
