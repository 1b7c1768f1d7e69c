"""The Retry-After of the gateway's 503 when every agent tried failed."""

from __future__ import annotations

import math

from agentladder.domain.routing.retry import MIN_RETRY_S, agent_wait_s, retry_after_s


def test_an_agent_waits_for_its_cooldown_and_its_providers_retry_after() -> None:
    """The later of a cooldown's end and a provider's Retry-After; 0 when both passed or
    there is neither."""
    assert agent_wait_s(100.0, None, None) == 0.0
    assert agent_wait_s(100.0, 130.0, None) == 30.0
    assert agent_wait_s(100.0, None, 112.5) == 12.5
    assert agent_wait_s(100.0, 130.0, 160.0) == 60.0
    assert agent_wait_s(100.0, 90.0, 95.0) == 0.0


def test_the_caller_may_retry_when_the_soonest_agent_may_be_asked() -> None:
    """The shortest wait, rounded up to a second, at least one second (also with none)."""
    assert retry_after_s([30.0, 12.2, 60.0]) == 13
    assert retry_after_s([30.0, 0.0]) == MIN_RETRY_S
    assert retry_after_s([0.2]) == MIN_RETRY_S
    assert retry_after_s([]) == MIN_RETRY_S
    assert retry_after_s([math.inf, 4.0]) == 4
    assert retry_after_s([math.inf]) == MIN_RETRY_S
