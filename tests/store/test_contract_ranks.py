"""Store contract, rank stats: compare-and-set by revision, atomic multi-agent writes, markers."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentladder.domain.stats import AgentPerformanceStats, record_submission
from agentladder.errors import AlreadyApplied, RevisionConflict
from agentladder.store.base import Store
from agentladder.store.retry import WriteTally, retry_on_conflict

STATS = AgentPerformanceStats(rank=3, avg_score=7.8, recent_latencies_ms=(25000.0, 30000.0))


def test_missing_agent_has_no_stats(with_store: Any) -> None:
    """get_stats of an unknown agent is None and list_stats is empty."""

    async def body(store: Store) -> None:
        assert await store.get_stats("nobody") is None
        assert await store.list_stats() == {}

    with_store(body)


def test_create_then_update_by_revision(with_store: Any) -> None:
    """Revision 0 creates; the returned revision updates; values round-trip exactly."""

    async def body(store: Store) -> None:
        first = await store.commit_stats({"a": (STATS, 0)})
        got = await store.get_stats("a")
        assert got is not None
        assert got.value == STATS
        assert got.revision == first["a"]
        newer = STATS.model_copy(update={"wins": 1})
        second = await store.commit_stats({"a": (newer, first["a"])})
        assert second["a"] != first["a"]
        listed = await store.list_stats()
        assert list(listed) == ["a"]
        assert listed["a"].value == newer

    with_store(body)


def test_stale_revision_conflicts(with_store: Any) -> None:
    """Writing with an old revision, or creating an existing agent, raises RevisionConflict."""

    async def body(store: Store) -> None:
        rev = (await store.commit_stats({"a": (STATS, 0)}))["a"]
        await store.commit_stats({"a": (STATS, rev)})
        with pytest.raises(RevisionConflict) as caught:
            await store.commit_stats({"a": (STATS, rev)})
        assert caught.value.key == "a"
        with pytest.raises(RevisionConflict):
            await store.commit_stats({"a": (STATS, 0)})

    with_store(body)


def test_multi_agent_write_is_all_or_nothing(with_store: Any) -> None:
    """One stale revision among three agents writes none of them."""

    async def body(store: Store) -> None:
        revs = await store.commit_stats({"a": (STATS, 0), "b": (STATS, 0), "c": (STATS, 0)})
        promoted = STATS.model_copy(update={"rank": 4})
        with pytest.raises(RevisionConflict) as caught:
            await store.commit_stats(
                {
                    "a": (promoted, revs["a"]),
                    "b": (promoted, revs["b"] + 99),
                    "c": (promoted, revs["c"]),
                }
            )
        assert caught.value.key == "b"
        after = await store.list_stats()
        assert {k: (v.value.rank, v.revision) for k, v in after.items()} == {
            k: (3, revs[k]) for k in "abc"
        }

    with_store(body)


def test_marker_applies_once(with_store: Any) -> None:
    """A second commit with the same deliberation marker raises AlreadyApplied, writes nothing."""

    async def body(store: Store) -> None:
        assert not await store.marker_applied("delib-1")
        revs = await store.commit_stats({"a": (STATS, 0)}, marker="delib-1")
        assert await store.marker_applied("delib-1")
        with pytest.raises(AlreadyApplied):
            await store.commit_stats(
                {"a": (STATS.model_copy(update={"wins": 9}), revs["a"])}, marker="delib-1"
            )
        got = await store.get_stats("a")
        assert got is not None
        assert got.value.wins == 0

    with_store(body)


def test_a_conflicting_marked_commit_does_not_consume_the_marker(with_store: Any) -> None:
    """When a marked commit fails on a revision, the marker stays free for the retry."""

    async def body(store: Store) -> None:
        await store.commit_stats({"a": (STATS, 0)})
        with pytest.raises(RevisionConflict):
            await store.commit_stats({"a": (STATS, 0)}, marker="delib-2")
        assert not await store.marker_applied("delib-2")

    with_store(body)


def test_concurrent_submissions_lose_no_update(with_store: Any) -> None:
    """20 tasks each recording 10 submissions for two agents with retries: counts exact."""

    async def body(store: Store) -> None:
        async def one(ok: bool) -> None:
            async def attempt() -> None:
                current = {a: await store.get_stats(a) for a in ("a", "b")}
                updates = {
                    a: (
                        record_submission(
                            AgentPerformanceStats() if v is None else v.value, latency_ms=5.0, ok=ok
                        ),
                        0 if v is None else v.revision,
                    )
                    for a, v in current.items()
                }
                await store.commit_stats(updates)

            for _ in range(10):
                await retry_on_conflict(attempt, op="stats", tally=tally)

        tally = WriteTally()
        await asyncio.gather(*(one(i % 2 == 0) for i in range(20)))
        # each of the 200 writes took one attempt that worked, and one more per conflict
        assert tally.attempts["stats"] - tally.conflicts["stats"] == 200
        assert not tally.exhausted
        for agent in ("a", "b"):
            got = await store.get_stats(agent)
            assert got is not None
            assert (got.value.tasks_completed, got.value.tasks_failed) == (100, 100)

    with_store(body)
