"""The rounds tell the health monitor every call: a provider's Retry-After makes its agent
down for as long as asked, on the monitor's clock, and is honoured within the round (no
call before the time asked for); a missing key is not retried."""

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


def test_a_retry_after_from_a_round_makes_the_agent_down_until_it_passes() -> None:
    """One round: the rate-limited agent is down for 120 s from its one failed call, the
    healthy ones not; at 120 s that time is over."""
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


class Counting(RateLimited):
    """A rate-limited provider that counts the calls it gets."""

    def __init__(self) -> None:
        self.calls = 0

    async def propose(self, request: ProposeRequest) -> Proposal:
        self.calls += 1
        return await super().propose(request)

    async def evaluate(self, request: EvaluateRequest) -> Evaluation:
        self.calls += 1
        return await super().evaluate(request)


RETRYING = ALLOWANCE.model_copy(update={"max_retries": 3})


def test_a_retry_after_is_honoured_within_the_round() -> None:
    """A 429 with Retry-After 120, retries allowed (3): the agent's provider is called
    once in the round; its retries and its evaluations are not made before the time it
    asked for (longer than the call timeout), each failure saying so; one submission."""
    limited = Counting()
    participants = [
        Participant(AgentConfig(name="limited"), limited, RETRYING),
        Participant(AgentConfig(name="a"), SimulatedProvider("a", SimulatedSettings()), RETRYING),
        Participant(AgentConfig(name="b"), SimulatedProvider("b", SimulatedSettings()), RETRYING),
    ]
    runner = RoundRunner(timeout_s=5.0)
    base = ProposeRequest(deliberation_id="d", round=1, user_query="q")
    found = asyncio.run(runner.run_round(1, participants, base, None))
    assert limited.calls == 1
    mine = next(p for p in found.proposals if p.agent_id == "limited")
    assert mine.attempts == 1
    assert mine.error is not None
    assert "not retried: its provider asked not to be called for 120 s more" in mine.error
    skipped = [e for p in found.proposals for e in p.evaluations if e.evaluator == "limited"]
    assert len(skipped) == 2
    assert all((e.error or "").startswith("not asked: its provider asked") for e in skipped)
    assert [s.agent_id for s in runner.submissions].count("limited") == 1


class OnceLimited:
    """Answers 429 with Retry-After 0.05 s once, then answers."""

    def __init__(self) -> None:
        self.calls = 0
        self.inner = SimulatedProvider("once", SimulatedSettings(quality=7.0))

    async def propose(self, request: ProposeRequest) -> Proposal:
        self.calls += 1
        if self.calls == 1:
            raise ProviderError("http", "answered 429", retry_after_s=0.05)
        return await self.inner.propose(request)

    async def evaluate(self, request: EvaluateRequest) -> Evaluation:
        return await self.inner.evaluate(request)

    async def aclose(self) -> None:
        """Nothing to close."""


def test_a_short_retry_after_is_waited_for_then_retried() -> None:
    """Retry-After 0.05 s, shorter than the call timeout: the retry waits for it and the
    proposal is delivered at the second attempt."""
    once = OnceLimited()
    participants = [
        Participant(AgentConfig(name="once"), once, RETRYING),
        Participant(AgentConfig(name="a"), SimulatedProvider("a", SimulatedSettings()), RETRYING),
    ]
    runner = RoundRunner(timeout_s=5.0)
    base = ProposeRequest(deliberation_id="d", round=1, user_query="q")
    found = asyncio.run(runner.run_round(1, participants, base, None))
    mine = next(p for p in found.proposals if p.agent_id == "once")
    assert (mine.attempts, mine.error, once.calls) == (2, None, 2)
    assert mine.aggregated_score is not None


class KeyMissing(RateLimited):
    """A provider whose API key variable is not set: refused, not retryable."""

    def __init__(self) -> None:
        self.calls = 0

    async def propose(self, request: ProposeRequest) -> Proposal:
        self.calls += 1
        raise ProviderError("refused", "environment variable K is not set", retryable=False)


def test_a_missing_key_is_not_retried() -> None:
    """A failure asking again cannot help (a missing key): one attempt, no retries."""
    missing = KeyMissing()
    participants = [
        Participant(AgentConfig(name="nokey"), missing, RETRYING),
        Participant(AgentConfig(name="a"), SimulatedProvider("a", SimulatedSettings()), RETRYING),
    ]
    runner = RoundRunner(timeout_s=5.0)
    base = ProposeRequest(deliberation_id="d", round=1, user_query="q")
    found = asyncio.run(runner.run_round(1, participants, base, None))
    mine = next(p for p in found.proposals if p.agent_id == "nokey")
    assert (mine.attempts, missing.calls) == (1, 1)
