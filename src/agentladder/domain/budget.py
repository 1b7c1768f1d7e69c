"""A client token's budget: its periods, their keys and ends, and the spend in whole units.

Rules (docs/gateway.md, "Budgets"):

- A period is a UTC calendar period: ``day`` (midnight to midnight), ``month`` (the 1st
  at midnight to the next 1st), or ``total`` (it never ends).
- The spend of a period is kept under its key: ``day-2026-12-05``, ``month-2026-12``,
  ``total``; a new period starts at 0 because its key is new.
- Spend is counted in nano-dollars (``NANO_PER_USD`` per dollar), whole numbers, so that
  the stores add exactly and concurrent increments commute.
- A client is over budget when its spend in the period is at or above the limit.
- A budgeted request holds an estimate of its cost before it is forwarded
  (``reservation_nano``): the prompt's estimated tokens at the input price plus its
  output tokens (``output_tokens``: ``max_completion_tokens`` or ``max_tokens``, the larger
  when both are given, else a configured default) at the output price. It is granted
  only when the spend, the other requests' holds and it together stay within the limit
  (``refusal``): the spend then passes the limit only by what answers cost beyond what
  they held.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Literal, get_args

from agentladder.errors import InvalidInput

__all__ = [
    "MAX_OUTPUT_TOKENS",
    "NANO_PER_USD",
    "OUTPUT_FIELDS",
    "PERIODS",
    "Period",
    "Refusal",
    "live_holds",
    "output_tokens",
    "over_budget",
    "period_end",
    "period_key",
    "refusal",
    "reservation_nano",
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


Refusal = Literal["spent", "does_not_fit"]
"""Why a hold is refused: the period's spend reached the limit, or the hold would pass it."""

OUTPUT_FIELDS = ("max_completion_tokens", "max_tokens")
"""The request's fields that bound its answer's tokens (OpenAI's current name first)."""

MAX_OUTPUT_TOKENS = 100_000_000
"""The most output tokens a request may ask for (past any model's: a typo, not a wish)."""


def output_tokens(body: Mapping[str, object], default: int) -> int:
    """The output tokens a request is held for: the larger of ``max_completion_tokens``
    and ``max_tokens`` given (null: not given), else ``default``; ``InvalidInput`` naming
    the field for a value that is not a whole number from 1 to ``MAX_OUTPUT_TOKENS``."""
    found: list[int] = []
    for name in OUTPUT_FIELDS:
        value = body.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidInput(name, value, "must be a whole number of tokens")
        if not 1 <= value <= MAX_OUTPUT_TOKENS:
            raise InvalidInput(name, value, f"must be from 1 to {MAX_OUTPUT_TOKENS}")
        found.append(value)
    return max(found) if found else default


def reservation_nano(
    prompt_tokens: int, output_tokens: int, input_price_per_mtok: float,
    output_price_per_mtok: float,
) -> int:  # fmt: skip
    """What a request holds, in nano-dollars: its prompt and output tokens at the prices
    per million tokens (the cost ``call_cost`` charges for the same usage)."""
    usd = (prompt_tokens * input_price_per_mtok + output_tokens * output_price_per_mtok) / 1e6
    return to_nano(usd)


def refusal(spent_nano: int, held_nano: int, want_nano: int, limit_usd: float) -> Refusal | None:
    """Whether a hold of ``want_nano`` is refused, given the period's spend and the holds
    of the requests in flight: ``spent`` at or over the limit, ``does_not_fit`` when all
    three together would pass it; None: granted."""
    limit = to_nano(limit_usd)
    if spent_nano >= limit:
        return "spent"
    if spent_nano + held_nano + want_nano > limit:
        return "does_not_fit"
    return None


def live_holds(holds: Mapping[str, tuple[int, float]], now: float) -> dict[str, tuple[int, float]]:
    """The holds (id: nano-dollars and when it expires, epoch seconds) still in force at
    ``now``: one past its expiry (its request's process died before settling it) counts
    no more."""
    return {hold: (nano, until) for hold, (nano, until) in holds.items() if until > now}
