"""The rounds tell the health monitor every call: a provider's Retry-After cools its
agent down for as long as asked, on the monitor's clock."""

from __future__ import annotations

import asyncio

from agentladder.domain.agents import AgentConfig
from agentladder.domain.levels import Level
from agentladder.domain.privileges import TaskAllowance
from agentladder.domain.routing import RoutingRules
from agentladder.errors import ProviderError
from agentladder.providers.base import EvaluateRequest, Evaluation, Proposal, ProposeRequest
from agentladder.providers.settings import SimulatedSettings
from agentladder.providers.simulated import SimulatedProvider
from agentladder.services.clock import FixedClock
from agentladder.services.deliberations.rounds import Participant, RoundRunner
from agentladder.services.routing.health import HealthMonitor

ALLOWANCE = TaskAllowance(
    allowed=True, reason=None, level=Level.ROOKIE, task_type=None, complexity=None,
    max_retries=0, can_self_correct=False, can_mentor=False,
)  # fmt: skip


class RateLimited:
    """A provider answering every call with a 429 and Retry-After: 120."""

    async def propose(self, request: ProposeRequest) -> Proposal:
        raise ProviderError("http", "answered 429", retry_after_s=120.0)

    async def evaluate(self, request: EvaluateRequest) -> Evaluation:
        raise ProviderError("http", "answered 429", retry_after_s=120.0)

    async def aclose(self) -> None:
        """Nothing to close."""


def test_a_retry_after_from_a_round_cools_the_agent_down_until_it_passes() -> None:
    """One round: the rate-limited agent cools down for 120 s from its one failed call,
    the healthy ones not; at 120 s it is over."""
    clock = FixedClock()
    health = HealthMonitor(RoutingRules(), clock)
    participants = [
        Participant(AgentConfig(name="limited"), RateLimited(), ALLOWANCE),
        Participant(AgentConfig(name="a"), SimulatedProvider("a", SimulatedSettings()), ALLOWANCE),
        Participant(AgentConfig(name="b"), SimulatedProvider("b", SimulatedSettings()), ALLOWANCE),
    ]
    runner = RoundRunner(timeout_s=5.0, health=health)
    base = ProposeRequest(deliberation_id="d", round=1, user_query="q")
    asyncio.run(runner.run_round(1, participants, base, None))
    cooldown = health.cooldown("limited")
    assert cooldown is not None
    assert cooldown.until == clock.now().timestamp() + 120.0
    assert "retry after 120 s" in cooldown.reason
    assert set(health.cooling()) == {"limited"}
    assert health.started == 1
    clock.advance(120.0)
    assert health.cooldown("limited") is None
    assert health.cooling() == {}
