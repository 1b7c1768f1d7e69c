"""Budgets' rules: UTC calendar periods, their keys and ends, whole nano-dollars."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentladder.domain.budget import (
    NANO_PER_USD,
    Period,
    over_budget,
    period_end,
    period_key,
    to_nano,
    to_usd,
)


def test_periods_are_utc_calendar_periods() -> None:
    """A day is keyed by its UTC date and ends at the next UTC midnight; a month by its
    UTC year and month, ending on the next 1st (December into January); total never ends."""
    now = datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC)
    assert period_key("day", now) == "day-2026-12-31"
    assert period_key("month", now) == "month-2026-12"
    assert period_key("total", now) == "total"
    assert period_end("day", now) == datetime(2027, 1, 1, tzinfo=UTC)
    assert period_end("month", now) == datetime(2027, 1, 1, tzinfo=UTC)
    assert period_end("total", now) is None
    assert period_end("month", datetime(2026, 2, 10, tzinfo=UTC)) == datetime(
        2026, 3, 1, tzinfo=UTC
    )


def test_a_time_in_another_zone_is_taken_in_utc() -> None:
    """01:00 at UTC+2 on the 5th is 23:00 UTC on the 4th: the 4th's day."""
    now = datetime(2026, 12, 5, 1, 0, tzinfo=timezone(timedelta(hours=2)))
    assert period_key("day", now) == "day-2026-12-04"
    assert period_end("day", now) == datetime(2026, 12, 5, tzinfo=UTC)


def test_a_naive_time_is_refused() -> None:
    """A time without a zone cannot be placed in a UTC period."""
    with pytest.raises(ValueError, match="timezone-aware"):
        period_key("day", datetime(2026, 12, 5))


def test_dollars_in_whole_nano_dollars() -> None:
    """25 micro-dollars are 25,000 nano-dollars; nothing negative or not finite is charged."""
    assert to_nano(25e-6) == 25_000
    assert to_nano(-1.0) == 0
    assert to_nano(float("nan")) == 0
    assert to_usd(NANO_PER_USD) == 1.0


def test_over_budget_at_the_limit() -> None:
    """Spend equal to the limit is over it; a nano-dollar less is not."""
    assert over_budget(to_nano(5.0), 5.0)
    assert not over_budget(to_nano(5.0) - 1, 5.0)


@settings(derandomize=True, max_examples=200)
@given(st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1)))
def test_the_end_of_a_period_begins_the_next(naive: datetime) -> None:
    """Just before a period's end the key is the period's; at its end the key changes."""
    now = naive.replace(tzinfo=UTC)
    periods: tuple[Period, ...] = ("day", "month")
    for period in periods:
        end = period_end(period, now)
        assert end is not None
        assert end > now
        assert period_key(period, end - timedelta(microseconds=1)) == period_key(period, now)
        assert period_key(period, end) != period_key(period, now)
