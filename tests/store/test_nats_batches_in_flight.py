"""Atomic batches in flight per stream stay under the server's limit (50 per stream: error
10210 beyond): one instance keeps at most ``BATCHES_IN_FLIGHT`` open on each stream."""

from __future__ import annotations

import asyncio

from agentladder.domain.stats import AgentPerformanceStats, record_submission
from agentladder.store.url import open_store


def test_two_hundred_rank_batches_at_once_are_all_stored(nats_store_url: str) -> None:
    """200 deliberations' rank updates at once (each an atomic batch over two agents and a
    marker): every one is stored, none refused for too many batches in flight."""

    async def main() -> None:
        store = await open_store(nats_store_url)
        try:
            stats = record_submission(AgentPerformanceStats(), latency_ms=5.0, ok=True)

            async def one(i: int) -> None:
                updates = {f"p{i}-a": (stats, 0), f"p{i}-b": (stats, 0)}
                await store.commit_stats(updates, marker=f"d-{i}")

            results = await asyncio.gather(*(one(i) for i in range(200)), return_exceptions=True)
            assert [r for r in results if r is not None] == []
            found = await store.get_many_stats([f"p{i}-{s}" for i in range(200) for s in "ab"])
            assert len(found) == 400
        finally:
            await store.close()

    asyncio.run(main())
