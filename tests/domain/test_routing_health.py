"""Health cooldowns: started by failures in a row, an error share or a Retry-After; they
end by themselves on the clock."""

from __future__ import annotations

from agentladder.domain.routing import Health, RoutingRules, cooldown_of, record_call

RULES = RoutingRules(
    cooldown_after_failures=3, cooldown_error_share=0.5, cooldown_window=10,
    cooldown_min_calls=6, cooldown_s=60.0, max_cooldown_s=300.0,
)  # fmt: skip


def calls(health: Health, outcomes: str, now: float, **kw: object) -> Health:
    for outcome in outcomes:
        health = record_call(health, ok=outcome == "+", now=now, rules=RULES, error="boom", **kw)  # type: ignore[arg-type]
    return health


def test_three_failures_in_a_row_start_a_cooldown_that_ends_by_itself() -> None:
    """Two failures: none; the third: 60 s from then, with its reason; over at 60 s."""
    health = calls(Health(), "--", 100.0)
    assert cooldown_of(health, 100.0) is None
    health = calls(health, "-", 100.0)
    cooldown = cooldown_of(health, 100.0)
    assert cooldown is not None
    assert (cooldown.since, cooldown.until) == (100.0, 160.0)
    assert cooldown.reason == "3 failed calls in a row"
    assert cooldown.last_error == "boom"
    assert cooldown_of(health, 159.9) is not None
    assert cooldown_of(health, 160.0) is None


def test_a_success_resets_the_run_of_failures() -> None:
    """fail, fail, ok, fail, fail: no cooldown."""
    assert cooldown_of(calls(Health(), "--+--", 0.0), 0.0) is None


def test_an_error_share_over_the_window_starts_one() -> None:
    """Alternating failures (never three in a row): under 6 calls nothing; a success
    never starts one; the failure that makes 4 of 7 does."""
    health = calls(Health(), "-+-+-+", 0.0)
    assert cooldown_of(health, 0.0) is None
    health = calls(health, "-", 0.0)
    found = cooldown_of(health, 0.0)
    assert found is not None
    assert found.reason == "4 of the last 7 calls failed"


def test_a_retry_after_is_honoured_at_once_and_capped() -> None:
    """One failure with Retry-After 120: cooled down 120 s; 10,000 asked: the cap, 300 s."""
    health = calls(Health(), "-", 0.0, retry_after_s=120.0)
    found = cooldown_of(health, 0.0)
    assert found is not None
    assert found.until == 120.0
    assert "retry after 120 s" in found.reason
    capped = cooldown_of(calls(Health(), "-", 0.0, retry_after_s=10_000.0), 0.0)
    assert capped is not None
    assert capped.until == 300.0


def test_calls_during_a_cooldown_do_not_count_and_it_starts_clean_after() -> None:
    """Failures while cooling down change nothing; after it ends, two failures are not
    enough for another (the record starts clean); a third is."""
    health = calls(Health(), "---", 0.0)
    assert calls(health, "-----", 10.0) == health
    after = calls(health, "--", 61.0)
    assert cooldown_of(after, 61.0) is None
    again = calls(after, "-", 61.0)
    found = cooldown_of(again, 61.0)
    assert found is not None
    assert again.cooldowns == 2
