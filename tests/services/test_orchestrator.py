"""The orchestrator end to end with simulated agents: rounds, ranking, filters, failures."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentladder.domain.deliberation import DeliberationRequest
from agentladder.domain.deliberation_record import DeliberationStatus, SideEffectState
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.errors import RevisionConflict, StoreUnavailable, TooFewAgents
from agentladder.providers.base import EvaluateRequest, Evaluation, Proposal, ProposeRequest
from agentladder.store.base import Store
from tests.services.world import simulated, world

EXAMPLES = [
    {"A": 7.5, "B": 8.2, "C": 6.1},
    {"A": 8.0, "B": 7.5, "C": 7.8, "D": 6.0},
    {"A": 9.0, "B": 8.5},
]


def ask(*agents: str, **fields: Any) -> DeliberationRequest:
    return DeliberationRequest(user_query="Which clause is risky?", agent_names=agents, **fields)


async def ranks(store: Store, *agents: str) -> dict[str, int]:
    out = {}
    for agent in agents:
        found = await store.get_stats(agent)
        out[agent] = 0 if found is None else found.value.rank
    return out


def test_the_specifications_three_deliberations_end_to_end(with_store: Any) -> None:
    """Simulated agents scoring as in the spec: B → 1; then A → 1, B untouched; then A → 2."""

    async def body(store: Store) -> None:
        expected = [
            {"A": 0, "B": 1, "C": 0},
            {"A": 1, "B": 1, "C": 0, "D": 0},
            {"A": 2, "B": 1},
        ]
        for qualities, after in zip(EXAMPLES, expected, strict=True):
            orchestrator = await world(store, simulated(qualities))
            record = await orchestrator.run(ask(*qualities, scope="standard"))
            await orchestrator.settle()
            assert record.status is DeliberationStatus.COMPLETED
            assert record.scores == qualities
            assert record.ranking.state is SideEffectState.APPLIED
            assert await ranks(store, *qualities) == after
        a = await store.get_stats("A")
        assert a is not None
        assert (a.value.wins, a.value.deliberations_completed) == (2, 3)
        assert a.value.rounds_completed == 6
        assert a.value.avg_score == pytest.approx((7.5 + 8.0 + 9.0) / 3)
        # 3 deliberations x 2 rounds: 1 proposal and one evaluation per peer each round
        assert a.value.tasks_completed == 2 * (1 + 2) + 2 * (1 + 3) + 2 * (1 + 1)

    with_store(body)


def test_the_record_holds_rounds_proposals_evaluations_and_the_result(with_store: Any) -> None:
    """Each round has every proposal with peers' evaluations; the result is the best one."""

    async def body(store: Store) -> None:
        orchestrator = await world(store, simulated({"a": 6.0, "b": 9.0, "c": 7.0}))
        record = await orchestrator.run(ask("a", "b", "c", scope="deep"))
        await orchestrator.settle()
        stored = await orchestrator.get(record.id)
        assert [r.number for r in stored.rounds] == [1, 2, 3]
        proposal = stored.rounds[0].proposals[1]
        assert proposal.agent_id == "b"
        assert sorted(e.evaluator for e in proposal.evaluations) == ["a", "c"]
        assert proposal.aggregated_score == 9.0
        assert stored.result is not None
        assert stored.result.agent_id == "b"
        assert stored.judgments.state is SideEffectState.APPLIED
        profile = await orchestrator.oracle.get_profile("b")
        assert "deliberation" in profile.specializations
        assert [d.id for d in await orchestrator.list()] == [record.id]

    with_store(body)


def test_min_agent_rank_rejects_with_the_excluded_list(with_store: Any) -> None:
    """Fewer than two agents at min_agent_rank: TooFewAgents listing each with rank and reason."""

    async def body(store: Store) -> None:
        orchestrator = await world(store, simulated({"a": 5.0, "b": 5.0, "c": 5.0}))
        await store.commit_stats({"a": (AgentPerformanceStats(rank=3), 0)})
        with pytest.raises(TooFewAgents) as caught:
            await orchestrator.run(ask("a", "b", "c", min_agent_rank=3))
        assert caught.value.qualified == ["a"]
        assert caught.value.excluded == [
            {"agent_id": "b", "rank": 0, "reason": "below_min_rank"},
            {"agent_id": "c", "rank": 0, "reason": "below_min_rank"},
        ]
        assert await store.list_deliberations() == []

    with_store(body)


def test_offline_agents_are_excluded(with_store: Any) -> None:
    """An agent not heard from for 3 intervals is excluded as offline."""

    async def body(store: Store) -> None:
        orchestrator = await world(store, simulated({"a": 5.0, "b": 6.0, "c": 7.0}))
        clock = orchestrator.registry.clock
        assert hasattr(clock, "advance")
        clock.advance(31)
        for agent in ("a", "b"):
            await orchestrator.registry.heartbeat({"name": agent})
        record = await orchestrator.run(ask("a", "b", "c"))
        assert record.agents == ["a", "b"]
        assert [(e.agent_id, e.reason) for e in record.excluded] == [("c", "offline")]
        await orchestrator.settle()

    with_store(body)


class Hanging:
    """A provider that never answers."""

    async def propose(self, request: ProposeRequest) -> Proposal:
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    async def evaluate(self, request: EvaluateRequest) -> Evaluation:
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        """Nothing to release."""


def test_an_agent_that_always_times_out_cannot_win_or_auto_promote(with_store: Any) -> None:
    """Alone at the floor, a timed-out agent promotes nobody; its failures are counted."""

    async def body(store: Store) -> None:
        providers = {**simulated({"y": 8.0, "z": 6.0}), "x": Hanging()}
        orchestrator = await world(store, providers, timeout_s=0.02)
        await store.commit_stats({a: (AgentPerformanceStats(rank=1), 0) for a in ("y", "z")})
        record = await orchestrator.run(ask("x", "y", "z", scope="quick"))
        await orchestrator.settle()
        assert record.status is DeliberationStatus.COMPLETED
        x = record.rounds[0].proposals[0]
        assert x.content is None
        assert x.error is not None
        assert "timeout" in x.error
        assert x.attempts == 1  # a rookie may retry 3 times, but its deadline passed
        assert record.scores["x"] is None
        assert record.ranking.promoted == []
        assert await ranks(store, "x", "y", "z") == {"x": 0, "y": 1, "z": 1}
        stats = await store.get_stats("x")
        assert stats is not None
        assert stats.value.tasks_failed >= 1 + 2  # its proposal, one try per peer proposal

    with_store(body)


class Flaky:
    """Wraps a store whose first ``failures`` commit_stats calls fail."""

    def __init__(self, inner: Store, failures: int) -> None:
        self.inner = inner
        self.failures = failures

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def commit_stats(self, updates: Any, *, marker: str | None = None) -> Any:
        if self.failures > 0:
            self.failures -= 1
            raise StoreUnavailable("injected outage")
        return await self.inner.commit_stats(updates, marker=marker)


def test_a_failing_store_delays_the_ranking_but_not_the_deliberation(with_store: Any) -> None:
    """The deliberation completes; the ranking is applied once the store recovers."""

    async def body(store: Store) -> None:
        flaky = Flaky(store, failures=3)
        orchestrator = await world(flaky, simulated({"a": 6.0, "b": 9.0}))
        record = await orchestrator.run(ask("a", "b", scope="quick"))
        assert record.status is DeliberationStatus.COMPLETED
        await orchestrator.settle()
        assert record.ranking.state is SideEffectState.APPLIED
        assert record.ranking.attempts == 4
        assert orchestrator.writes.retried == {"ranking": 3}  # /metrics: side effects retried
        assert orchestrator.settling == (0, 0.0)  # none in flight now
        assert await ranks(store, "a", "b") == {"a": 0, "b": 1}
        assert (await orchestrator.get(record.id)).ranking.state is SideEffectState.APPLIED

    with_store(body)


class Racing:
    """Wraps a store whose first ``losses`` commit_stats calls lose a compare-and-set race."""

    def __init__(self, inner: Store, losses: int) -> None:
        self.inner = inner
        self.losses = losses

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def commit_stats(self, updates: Any, *, marker: str | None = None) -> Any:
        if self.losses > 0:
            self.losses -= 1
            raise RevisionConflict("stats/a", 1, 2)
        return await self.inner.commit_stats(updates, marker=marker)


def test_a_lost_race_is_counted_and_retried_at_once(with_store: Any) -> None:
    """Two lost compare-and-sets on the stats: three attempts, two conflicts, none given up
    (what /metrics shows as agentladder_store_cas_*{op="stats"}); no back-off retry."""

    async def body(store: Store) -> None:
        racing = Racing(store, losses=2)
        orchestrator = await world(racing, simulated({"a": 6.0, "b": 9.0}))
        await orchestrator.run(ask("a", "b", scope="quick"))
        await orchestrator.settle()
        writes = orchestrator.writes
        assert (writes.attempts["stats"], writes.conflicts["stats"]) == (3, 2)
        assert not writes.exhausted
        assert not writes.retried
        assert await ranks(store, "a", "b") == {"a": 0, "b": 1}

    with_store(body)
