"""NATS: the deliberation listings made all the time, against reading every record.

One nats-server (JetStream on this machine's disk), one NATS store. The bucket is filled
with ``RECORDS`` completed deliberation records (a body of about 3 KB each: five agents,
two rounds of proposals, as the orchestrator stores them) and 10 open ones. Then,
``PASSES`` times: 50 deliberations written as a running one is (queued, then running,
then settling, then completed for 40 of them), and one look for the open ones, timed
(``list_deliberations`` with the open statuses: what ``recovery._unsettled`` asks; the
store keeps those records apart and reads what was written since its last look), and
the dashboard's page (the newest 50 records: the store keeps the newest records' keys
and reads the page's records by key), each beside the way every listing was answered
before (every record read: ``list_deliberations`` asked for a page past the newest
view, which it answers that way), the results checked equal. Medians of the passes; the
first look (which reads the bucket once, at an instance's start) apart.

Run: ``.venv/bin/python -m benchmarks nats_record_views``; ``AGENTLADDER_OPEN_RECORDS``
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


async def _timed(
    store: Store, statuses: list[str] | None, offset: int = 0
) -> tuple[float, list[str]]:
    start = time.perf_counter()
    docs = await store.list_deliberations(
        limit=50 if statuses is None else 10**9, offset=offset, statuses=statuses
    )
    return time.perf_counter() - start, [d.id for d in docs]


async def _every(store: Store) -> tuple[float, list[str], list[str]]:
    """Every record read, as every listing was before: the open ones and the newest 50."""
    start = time.perf_counter()
    docs = await store.list_deliberations(limit=10**9, offset=0, statuses=[*OPEN, "completed"])
    took = time.perf_counter() - start
    return took, [d.id for d in docs if d.status in OPEN_STATUSES], [d.id for d in docs[:50]]


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
        newest: list[float] = []
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
            took_page, page = await _timed(store, None)
            took_all, all_open, all_page = await _every(store)
            assert found == all_open, "the kept open records differ from a full read"
            assert page == all_page, "the newest page differs from a full read"
            kept.append(took)
            newest.append(took_page)
            every.append(took_all)
        k, p, e = (statistics.median(x) for x in (kept, newest, every))
        print(f"  look for open records, median of {PASSES}: {k * 1000:.1f} ms ({k / e:.4f})")
        print(f"  the newest 50, median of {PASSES}: {p * 1000:.1f} ms ({p / e:.4f})")
        print(f"  reading every record (as before), median of {PASSES}: {e * 1000:.0f} ms")
    finally:
        await store.close()


def main() -> None:
    """Fill a bucket, then time the two ways of finding its open records."""
    with NatsServer() as server:
        asyncio.run(_run(f"{server.url}?prefix=viewsbench"))


if __name__ == "__main__":
    main()
