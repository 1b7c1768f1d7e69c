"""The gateway's calls folded into the agents' stats in batches (``services/gateway/stats.py``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from agentladder.domain.ranking import Submission
from agentladder.domain.stats import AgentPerformanceStats, record_submission
from agentladder.errors import StoreUnavailable
from agentladder.services.gateway.stats import StatsRecorder
from agentladder.store.base import StatsUpdate, Store
from agentladder.store.memory import MemoryStore


def test_a_flush_folds_every_call_into_each_agents_stats(with_store: Callable[..., Any]) -> None:
    """Three calls of two agents, flushed twice: counts and latency windows as if each
    call were recorded alone, on every store; a flush with nothing kept writes nothing."""

    async def body(store: Store) -> None:
        recorder = StatsRecorder(store)
        await store.commit_stats({"a": (AgentPerformanceStats(rank=2), 0)})
        recorder.add(Submission(agent_id="a", latency_ms=10.0, ok=True))
        recorder.add(Submission(agent_id="b", latency_ms=30.0, ok=False))
        await recorder.flush()
        recorder.add(Submission(agent_id="a", latency_ms=20.0, ok=False))
        await recorder.flush()
        await recorder.flush()
        found = await store.get_many_stats(["a", "b"])
        a, b = found["a"], found["b"]
        assert a is not None
        assert b is not None
        expected = AgentPerformanceStats(rank=2)
        for latency, ok in ((10.0, True), (20.0, False)):
            expected = record_submission(expected, latency_ms=latency, ok=ok)
        assert a.value == expected
        assert (b.value.tasks_completed, b.value.tasks_failed) == (0, 1)

    with_store(body)


class _Away:
    """A store whose stats cannot be read right now."""

    async def get_many_stats(self, agents: list[str]) -> dict[str, Any]:
        raise StoreUnavailable("the store is away")


def test_calls_are_kept_while_the_store_is_away() -> None:
    """A flush that meets an unavailable store raises it and keeps the calls: the next
    flush, the store back, writes them."""

    async def body() -> None:
        recorder = StatsRecorder(_Away())  # type: ignore[arg-type]
        recorder.add(Submission(agent_id="a", latency_ms=5.0, ok=True))
        with pytest.raises(StoreUnavailable):
            await recorder.flush()
        recorder.store = MemoryStore()  # back
        await recorder.flush()
        found = (await recorder.store.get_many_stats(["a"]))["a"]
        assert found is not None
        assert found.value.tasks_completed == 1

    asyncio.run(body())


class _Slow(MemoryStore):
    """A memory store whose stats write waits until the test releases it."""

    def __init__(self) -> None:
        super().__init__()
        self.writing = asyncio.Event()
        self.release = asyncio.Event()

    async def commit_stats(
        self, updates: Mapping[str, StatsUpdate], *, marker: str | None = None
    ) -> dict[str, int]:
        self.writing.set()
        await self.release.wait()
        return await super().commit_stats(updates, marker=marker)


def test_a_stop_during_a_write_lets_it_end_and_loses_nothing() -> None:
    """Stopping while the background loop writes a batch waits for that write (cancelling
    it midway dropped the batch it had taken: the calls were lost)."""

    async def body() -> None:
        store = _Slow()
        recorder = StatsRecorder(store, flush_s=0.01)
        recorder.add(Submission(agent_id="a", latency_ms=10.0, ok=True))
        recorder.start()
        await asyncio.wait_for(store.writing.wait(), 10)
        closing = asyncio.ensure_future(recorder.close())
        await asyncio.sleep(0.05)  # the stop is under way while the write waits
        store.release.set()
        await asyncio.wait_for(closing, 10)
        found = (await store.get_many_stats(["a"]))["a"]
        assert found is not None
        assert found.value.tasks_completed == 1

    asyncio.run(body())
