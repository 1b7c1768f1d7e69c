"""A deliberation's side effects run together: its participants are judged at once, beside
its ranking and its skill evidence (each writes its own state and reads no other's), so
that the time its agents' locks are held is the longest of them, not their sum. A
judgment that fails is retried only after the others have ended, and nothing is applied
twice."""

from __future__ import annotations

import asyncio
from typing import Any

from agentladder.domain.deliberation_record import SideEffectState
from agentladder.errors import StoreUnavailable
from agentladder.store.base import Store
from tests.services.test_external import report
from tests.services.world import world

SCORES: dict[str, float | None] = {"A": 8.0, "B": 6.0, "C": 7.0, "D": 4.0, "E": 5.0}


class Watched:
    """Wraps a store: the Oracle's writes give way to other tasks before they are made
    (as a remote store's round trip does) and are counted while in flight; the stats'
    commit notes whether an Oracle write was in flight when it began."""

    def __init__(self, inner: Store, fail_once: str | None = None, delay: float = 0.02) -> None:
        self.inner = inner
        self.in_flight = 0
        self.most = 0
        self.started = asyncio.Event()
        self.ranking_beside_judgments = False
        self.fail_once = fail_once  # this agent's first write fails at once
        self.delay = delay

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def apply_oracle(self, agent_id: str, key: str, fold: Any) -> Any:
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        self.started.set()
        try:
            if agent_id == self.fail_once:
                self.fail_once = None
                raise StoreUnavailable("the store went away")
            await asyncio.sleep(self.delay)
            return await self.inner.apply_oracle(agent_id, key, fold)
        finally:
            self.in_flight -= 1

    async def commit_stats(self, updates: Any, marker: Any = None) -> Any:
        try:
            await asyncio.wait_for(self.started.wait(), 1.0)
        except TimeoutError:
            pass
        else:
            self.ranking_beside_judgments = self.in_flight > 0
        return await self.inner.commit_stats(updates, marker=marker)


def test_participants_are_judged_at_once_beside_the_ranking(with_store: Any) -> None:
    """Five participants: their five judgments are in flight together, and the ranking's
    commit begins while they are; everything is applied, each agent judged once."""

    async def body(store: Store) -> None:
        watched = Watched(store)
        orchestrator = await world(watched, {})
        record, _ = await orchestrator.report(report("together", SCORES))
        await orchestrator.settle()
        assert record.ranking.state is SideEffectState.APPLIED
        assert record.judgments.state is SideEffectState.APPLIED
        assert watched.most == len(SCORES)
        assert watched.ranking_beside_judgments
        for agent in SCORES:
            profile = await store.get_profile(agent)
            assert profile is not None
            assert profile.value.stats.total_tasks == 1, agent
            stats = await store.get_stats(agent)
            assert stats is not None
            assert stats.value.deliberations_completed == 1, agent

    with_store(body)


def test_a_failed_judgment_is_retried_after_the_others_end(with_store: Any) -> None:
    """One participant's write fails at once while the other four take 0.3 s (longer than
    the first back-off, 50 ms): the side effect is retried only after those four have
    ended (none of the first attempt's writes in flight beside it), and every agent has
    exactly one judgment."""

    async def body(store: Store) -> None:
        watched = Watched(store, fail_once="C", delay=0.3)
        orchestrator = await world(watched, {})
        original = watched.apply_oracle
        ended: set[str] = set()  # agents whose first write has ended
        at_retry: list[set[str]] = []  # those of them when C's second write begins

        async def spying(agent_id: str, key: str, fold: Any) -> Any:
            if agent_id == "C" and watched.fail_once is None:
                at_retry.append(set(ended))
            try:
                return await original(agent_id, key, fold)
            finally:
                ended.add(agent_id)

        watched.apply_oracle = spying  # type: ignore[method-assign]
        record, _ = await orchestrator.report(report("retried", SCORES))
        await orchestrator.settle()
        assert record.judgments.state is SideEffectState.APPLIED
        assert record.judgments.attempts == 2
        assert orchestrator.writes.retried["judgments"] == 1
        assert at_retry == [set(SCORES)]  # every first write, C's failed one too
        for agent in SCORES:
            profile = await store.get_profile(agent)
            assert profile is not None
            assert profile.value.stats.total_tasks == 1, agent

    with_store(body)
