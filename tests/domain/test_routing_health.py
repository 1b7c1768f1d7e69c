"""Agent health, a circuit breaker per agent: down after failures in a row, an error share
or a Retry-After, for a time that doubles at each opening in a row; then recovering until
the next call decides; degraded over an error share; pinned down for a missing key."""

from __future__ import annotations

from agentladder.domain.routing import (
    Health,
    HealthStatus,
    RoutingRules,
    call_share,
    cooldown_of,
    health_of,
    record_call,
)
from agentladder.domain.routing.health import HALF_OPEN_SHARE, pinned

RULES = RoutingRules(
    cooldown_after_failures=3, cooldown_error_share=0.5, cooldown_window=10,
    cooldown_min_calls=6, cooldown_s=60.0, max_cooldown_s=300.0,
    degraded_error_share=0.2, degraded_min_calls=5,
)  # fmt: skip


def calls(health: Health, outcomes: str, now: float, **kw: object) -> Health:
    for outcome in outcomes:
        health = record_call(health, ok=outcome == "+", now=now, rules=RULES, error="boom", **kw)  # type: ignore[arg-type]
    return health


def status(health: Health, now: float) -> HealthStatus:
    return health_of(health, now, RULES).status


def test_three_failures_in_a_row_make_it_down_for_a_time() -> None:
    """Two failures: degraded at most; the third: down 60 s from then, with its reason;
    at 60 s the time is over and it is recovering (degraded), not ok."""
    health = calls(Health(), "--", 100.0)
    assert status(health, 100.0) is not HealthStatus.DOWN
    health = calls(health, "-", 100.0)
    found = health_of(health, 100.0, RULES)
    assert found.status is HealthStatus.DOWN
    assert (found.since, found.until) == (100.0, 160.0)
    assert found.reason == "3 failed calls in a row"
    assert found.last_error == "boom"
    cooldown = cooldown_of(health, 159.9)
    assert cooldown is not None
    assert cooldown.until == 160.0
    assert cooldown_of(health, 160.0) is None
    after = health_of(health, 160.0, RULES)
    assert after.status is HealthStatus.DEGRADED
    assert after.reason.startswith("recovering")
    assert after.since == 160.0


def test_a_success_resets_the_run_of_failures() -> None:
    """fail, fail, ok, fail, fail: not down."""
    assert status(calls(Health(), "--+--", 0.0), 0.0) is not HealthStatus.DOWN


def test_an_error_share_over_the_window_makes_it_down() -> None:
    """Alternating failures (never three in a row): under 6 calls not down; a success
    never makes it down; the failure that makes 4 of 7 does."""
    health = calls(Health(), "-+-+-+", 0.0)
    assert status(health, 0.0) is HealthStatus.DEGRADED  # 3 of 6 failed: over 20%
    health = calls(health, "-", 0.0)
    found = health_of(health, 0.0, RULES)
    assert found.status is HealthStatus.DOWN
    assert found.reason == "4 of the last 7 calls failed"


def test_a_retry_after_makes_it_down_at_once_as_long_as_asked_and_capped() -> None:
    """One failure with Retry-After 120: down 120 s; 10,000 asked: the cap, 300 s."""
    found = health_of(calls(Health(), "-", 0.0, retry_after_s=120.0), 0.0, RULES)
    assert found.status is HealthStatus.DOWN
    assert found.until == 120.0
    assert "retry after 120 s" in found.reason
    capped = health_of(calls(Health(), "-", 0.0, retry_after_s=10_000.0), 0.0, RULES)
    assert capped.until == 300.0


def test_calls_while_down_do_not_count() -> None:
    """Failures and successes while down (calls already under way) change nothing."""
    health = calls(Health(), "---", 0.0)
    assert calls(health, "--+--", 10.0) == health


def test_recovering_the_next_call_decides_and_a_failure_doubles_the_time() -> None:
    """After 60 s down, the first call fails: down again 120 s; then 240; then the cap 300.
    After that, an answered call closes the breaker: ok, with a clean window, and the next
    opening is 60 s again."""
    health = calls(Health(), "---", 0.0)
    health = calls(health, "-", 60.0)
    found = health_of(health, 60.0, RULES)
    assert (found.status, found.until) == (HealthStatus.DOWN, 180.0)
    assert found.reason == "the first call after it was down failed too"
    health = calls(health, "-", 180.0)
    assert health_of(health, 180.0, RULES).until == 420.0
    health = calls(health, "-", 420.0)
    assert health_of(health, 420.0, RULES).until == 720.0  # 480 asked, capped at 300
    health = calls(health, "+", 720.0)
    found = health_of(health, 720.0, RULES)
    assert found.status is HealthStatus.OK
    assert (found.calls, found.failed, found.since) == (1, 0, 720.0)
    assert health_of(calls(health, "---", 800.0), 800.0, RULES).until == 860.0
    assert health.cooldowns == 4


def test_degraded_over_the_error_share_and_ok_again_under_it() -> None:
    """2 failed of 8 (25%, over 20%): degraded since the call that made it so; more
    successes bring it under: ok again, since then. The share routing uses is 6/8."""
    health = calls(Health(), "+-++-+++", 0.0)
    found = health_of(health, 5.0, RULES)
    assert found.status is HealthStatus.DEGRADED
    assert found.reason == "2 of the last 8 calls failed (more than 20%)"
    assert call_share(health, 5.0, RULES) == 6 / 8
    health = calls(health, "++", 9.0)
    found = health_of(health, 9.0, RULES)
    assert (found.status, found.since) == (HealthStatus.OK, 9.0)
    assert call_share(health, 9.0, RULES) == 1.0


def test_evaluations_are_counted_apart_too() -> None:
    """The evaluate calls have their own window: its failures and count."""
    health = calls(Health(), "+", 0.0)
    health = calls(health, "-+", 0.0, evaluation=True)
    found = health_of(health, 0.0, RULES)
    assert (found.calls, found.failed, found.evaluations, found.evaluations_failed) == (
        3, 1, 2, 1,
    )  # fmt: skip


def test_a_pinned_agent_is_down_until_a_restart_whatever_its_calls() -> None:
    """A missing key: down from then, no end, the reason given; answered calls change
    nothing; routing's share is 0, and no timed cooldown is shown."""
    health = pinned(Health(), "its API key variable K is not set", 5.0)
    health = calls(health, "+++", 10.0)
    found = health_of(health, 1e9, RULES)
    assert (found.status, found.since, found.until) == (HealthStatus.DOWN, 5.0, None)
    assert found.reason == "its API key variable K is not set"
    assert call_share(health, 1e9, RULES) == 0.0
    assert cooldown_of(health, 10.0) is None


def test_the_share_while_recovering_is_a_half() -> None:
    """Never called: ok, share 1, "no call yet"; recovering: HALF_OPEN_SHARE."""
    fresh = health_of(Health(), 0.0, RULES)
    assert (fresh.status, fresh.reason, fresh.since) == (HealthStatus.OK, "no call yet", None)
    health = calls(Health(), "---", 0.0)
    assert call_share(health, 30.0, RULES) == 0.0
    assert call_share(health, 60.0, RULES) == HALF_OPEN_SHARE
