"""The token bucket's arithmetic, the clock given: exact figures."""

from __future__ import annotations

import pytest

from agentladder.domain.token_bucket import TokenBucket, reset_text, retry_after


def test_a_full_bucket_lets_its_burst_through_then_refuses() -> None:
    """A full bucket passes its burst of 20 (19, 18, ... 0 left) and refuses the 21st."""
    bucket = TokenBucket(10.0, 20, now=100.0)
    taken = [bucket.take(100.0) for _ in range(21)]
    assert [t.allowed for t in taken] == [True] * 20 + [False]
    assert [t.remaining for t in taken[:3]] == [19, 18, 17]
    assert taken[19].remaining == 0
    assert taken[20].remaining == 0


def test_a_refusal_says_when_the_next_token_comes_and_when_the_bucket_is_full() -> None:
    """Empty at 10/s: the next token is 0.1 s away, a full bucket 2 s."""
    bucket = TokenBucket(10.0, 20, now=0.0)
    for _ in range(20):
        bucket.take(0.0)
    refused = bucket.take(0.0)
    assert not refused.allowed
    assert refused.wait_s == pytest.approx(0.1)
    assert refused.full_s == pytest.approx(2.0)


def test_the_bucket_refills_at_its_rate_up_to_its_burst() -> None:
    """0.35 s at 10/s refills 3.5 tokens (3 pass, the 4th waits 0.05 s); an hour, the burst only."""
    bucket = TokenBucket(10.0, 20, now=0.0)
    for _ in range(20):
        bucket.take(0.0)
    later = [bucket.take(0.35) for _ in range(4)]
    assert [t.allowed for t in later] == [True, True, True, False]
    assert later[3].wait_s == pytest.approx(0.05)
    burst = [bucket.take(3600.0).allowed for _ in range(21)]
    assert burst == [True] * 20 + [False]


def test_a_clock_stepping_back_refills_nothing() -> None:
    """A take at an earlier time than the last refills nothing."""
    bucket = TokenBucket(1.0, 1, now=10.0)
    assert bucket.take(10.0).allowed
    assert not bucket.take(5.0).allowed
    assert bucket.take(11.0).allowed


def test_a_slow_rate_waits_whole_seconds() -> None:
    """At 0.5/s an empty bucket's next token is 2 s away: Retry-After 2."""
    bucket = TokenBucket(0.5, 1, now=0.0)
    bucket.take(0.0)
    refused = bucket.take(0.0)
    assert refused.wait_s == pytest.approx(2.0)
    assert retry_after(refused.wait_s) == 2


@pytest.mark.parametrize(
    ("wait_s", "header"), [(0.0, 1), (0.1, 1), (1.0, 1), (1.0000001, 2), (2.5, 3), (30.0, 30)]
)
def test_retry_after_is_the_wait_rounded_up_at_least_one(wait_s: float, header: int) -> None:
    """Retry-After is the wait in whole seconds, rounded up, never 0."""
    assert retry_after(wait_s) == header


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.0, "0ms"), (0.0201, "21ms"), (0.1, "100ms"), (1.0, "1s"), (1.5, "1.5s"),
     (2.0, "2s"), (59.999, "59.999s"), (60.0, "1m0s"), (360.0, "6m0s"), (61.25, "1m1.25s")],
)  # fmt: skip
def test_reset_is_spelled_as_openai_spells_it(seconds: float, text: str) -> None:
    """Durations are spelled as OpenAI's reset headers spell them, milliseconds rounded up."""
    assert reset_text(seconds) == text


@pytest.mark.parametrize(("rate", "burst"), [(0.0, 1), (-1.0, 1), (float("inf"), 1), (1.0, 0)])
def test_a_bucket_refuses_a_rate_or_burst_that_means_nothing(rate: float, burst: int) -> None:
    """A rate that is not a positive number, or a burst under 1: ValueError naming it."""
    with pytest.raises(ValueError, match=r"rate_per_s|burst"):
        TokenBucket(rate, burst, now=0.0)
