"""A client token's budget: its periods, their keys and ends, and the spend in whole units.

Rules (docs/gateway.md, "Budgets"):

- A period is a UTC calendar period: ``day`` (midnight to midnight), ``month`` (the 1st
  at midnight to the next 1st), or ``total`` (it never ends).
- The spend of a period is kept under its key: ``day-2026-12-05``, ``month-2026-12``,
  ``total``; a new period starts at 0 because its key is new.
- Spend is counted in nano-dollars (``NANO_PER_USD`` per dollar), whole numbers, so that
  the stores add exactly and concurrent increments commute.
- A client is over budget when its spend in the period is at or above the limit.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Literal, get_args

__all__ = [
    "NANO_PER_USD",
    "PERIODS",
    "Period",
    "over_budget",
    "period_end",
    "period_key",
    "to_nano",
    "to_usd",
]

Period = Literal["day", "month", "total"]
PERIODS: tuple[Period, ...] = get_args(Period)
"""Every period, each kept for every client token with a name."""

NANO_PER_USD = 1_000_000_000


def _utc(now: datetime) -> datetime:
    if now.tzinfo is None:
        raise ValueError(f"now must be timezone-aware, not {now!r}")
    return now.astimezone(UTC)


def period_key(period: Period, now: datetime) -> str:
    """The key of the period ``now`` falls in: ``day-YYYY-MM-DD``, ``month-YYYY-MM``, ``total``."""
    moment = _utc(now)
    if period == "day":
        return f"day-{moment:%Y-%m-%d}"
    if period == "month":
        return f"month-{moment:%Y-%m}"
    return "total"


def period_end(period: Period, now: datetime) -> datetime | None:
    """When the period ``now`` falls in ends (the next one starts); None for ``total``."""
    moment = _utc(now)
    if period == "day":
        return moment.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
    if period == "month":
        if moment.month == 12:
            return datetime(moment.year + 1, 1, 1, tzinfo=UTC)
        return datetime(moment.year, moment.month + 1, 1, tzinfo=UTC)
    return None


def to_nano(usd: float) -> int:
    """Dollars in whole nano-dollars (rounded to the nearest; 0 for a negative or NaN)."""
    if not math.isfinite(usd) or usd <= 0:
        return 0
    return round(usd * NANO_PER_USD)


def to_usd(nano: int) -> float:
    """Nano-dollars in dollars."""
    return nano / NANO_PER_USD


def over_budget(spent_nano: int, limit_usd: float) -> bool:
    """Whether a spend has reached its limit (``spent >= limit``)."""
    return spent_nano >= to_nano(limit_usd)
