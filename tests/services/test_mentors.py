"""Mentors: experts' best outputs are shown to lower-level agents when the config says so."""

from __future__ import annotations

from typing import Any

from agentladder.config import OrchestratorSettings
from agentladder.domain.deliberation import DeliberationRequest
from agentladder.providers.base import (
    EvaluateRequest,
    Evaluation,
    Proposal,
    ProposeRequest,
    Provider,
)
from agentladder.store.base import Store
from tests.services.world import simulated, world


class Recording:
    """Wraps a provider and keeps every propose request it was sent."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner
        self.asked: list[ProposeRequest] = []

    async def propose(self, request: ProposeRequest) -> Proposal:
        self.asked.append(request)
        return await self.inner.propose(request)

    async def evaluate(self, request: EvaluateRequest) -> Evaluation:
        return await self.inner.evaluate(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def test_experts_outputs_reach_lower_levels_as_examples(with_store: Any) -> None:
    """After an expert scored 9.5, rookies are shown that output; the expert is not."""

    async def body(store: Store) -> None:
        providers = simulated({"expert": 9.5, "rookie": 6.0, "other": 7.0})
        recorded = {name: Recording(p) for name, p in providers.items()}
        settings = OrchestratorSettings(mentor_examples=2)
        orchestrator = await world(store, recorded, settings=settings)
        await orchestrator.oracle.award_xp("expert", "seed", 2000, "seed")
        request = DeliberationRequest(
            user_query="q", agent_names=["expert", "rookie", "other"], scope="quick"
        )
        first = await orchestrator.run(request)
        assert recorded["rookie"].asked[0].examples == ()
        assert [p.mentor for p in first.rounds[0].proposals] == [True, False, False]
        await orchestrator.run(request)
        await orchestrator.settle()
        shown = recorded["rookie"].asked[1].examples
        assert len(shown) == 1
        assert "quality=9.5" in shown[0]
        assert recorded["expert"].asked[1].examples == ()
        restarted = await world(store, recorded, settings=settings)
        await restarted.load_mentors()
        assert restarted.mentors.examples(None) == (shown[0], shown[0])

    with_store(body)


def test_mentor_examples_are_off_by_default(with_store: Any) -> None:
    """With the default config no examples are sent."""

    async def body(store: Store) -> None:
        recorded = {n: Recording(p) for n, p in simulated({"e": 9.5, "r": 6.0}).items()}
        orchestrator = await world(store, recorded)
        await orchestrator.oracle.award_xp("e", "seed", 2000, "seed")
        request = DeliberationRequest(user_query="q", agent_names=["e", "r"], scope="quick")
        await orchestrator.run(request)
        await orchestrator.run(request)
        await orchestrator.settle()
        assert all(asked.examples == () for asked in recorded["r"].asked)

    with_store(body)
