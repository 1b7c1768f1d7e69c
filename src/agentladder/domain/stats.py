"""Per-agent performance stats: the JSON value stored under the agent_id in the rank store.

Rules (seed ``agent-ranking.md``, decisions in ``DESIGN.md``):

- Every propose or evaluate call is one submission: ``tasks_completed`` or
  ``tasks_failed`` += 1, and its latency (failures' too) enters ``recent_latencies_ms``,
  a sliding window of the last ``LATENCY_WINDOW`` (64) latencies. ``avg_latency_ms`` is
  the mean of that window.
- ``deliberations_completed`` and ``rounds_completed`` count the deliberations and the
  rounds in which the agent had a scored proposal. ``avg_score`` is the incremental mean
  over those deliberations: ``avg += (score - avg) / n``. A deliberation without a score
  for the agent changes none of the three (its failures already show in
  ``tasks_failed``) but still sets ``updated_at``.
- A promotion is rank += 1 and wins += 1 (wins = floor-group promotions). Rank never
  decreases. ``updated_at`` (unix seconds) is the ``now`` of the last deliberation.
- Percentiles are nearest-rank: the q-th percentile of n sorted latencies is the
  ``ceil(q / 100 * n)``-th smallest (the smallest for q = 0), always an observed value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from statistics import fmean
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from agentladder.errors import InvalidInput

__all__ = [
    "LATENCY_WINDOW",
    "AgentPerformanceStats",
    "latency_max",
    "latency_p50",
    "latency_p90",
    "latency_percentile",
    "record_deliberation",
    "record_submission",
    "task_success_ratio",
    "window_percentile",
]

LATENCY_WINDOW = 64

_Count = Annotated[int, Field(ge=0)]
_NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class AgentPerformanceStats(BaseModel):
    """The seed's AgentPerformanceStats, field for field; round-trips through JSON."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rank: _Count = 0
    rounds_completed: _Count = 0
    avg_score: Annotated[float, Field(ge=0, le=10, allow_inf_nan=False)] = 0.0
    deliberations_completed: _Count = 0
    wins: _Count = 0
    updated_at: _Count = 0
    avg_latency_ms: _NonNegative = 0.0
    tasks_completed: _Count = 0
    tasks_failed: _Count = 0
    recent_latencies_ms: Annotated[tuple[_NonNegative, ...], Field(max_length=LATENCY_WINDOW)] = ()


def _replace(stats: AgentPerformanceStats, **changes: Any) -> AgentPerformanceStats:
    return AgentPerformanceStats.model_validate({**stats.model_dump(), **changes})


def _is_number(value: object) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float)


def record_submission(
    stats: AgentPerformanceStats, *, latency_ms: float, ok: bool
) -> AgentPerformanceStats:
    """Count one propose or evaluate call and slide its latency into the window."""
    if not _is_number(latency_ms) or not math.isfinite(latency_ms) or latency_ms < 0:
        raise InvalidInput("latency_ms", latency_ms, "must be a finite number >= 0")
    window = (*stats.recent_latencies_ms, float(latency_ms))[-LATENCY_WINDOW:]
    return _replace(
        stats,
        tasks_completed=stats.tasks_completed + (1 if ok else 0),
        tasks_failed=stats.tasks_failed + (0 if ok else 1),
        recent_latencies_ms=window,
        avg_latency_ms=fmean(window),
    )


def record_deliberation(
    stats: AgentPerformanceStats,
    *,
    score: float | None,
    rounds: int,
    promoted: bool,
    now: int,
) -> AgentPerformanceStats:
    """Fold one finished deliberation into the stats.

    ``score`` is the agent's deliberation score (``None``: no scored proposal), ``rounds``
    the number of rounds in which it had a scored proposal (0 when ``score`` is ``None``,
    at least 1 otherwise), ``promoted`` whether it won a floor-group promotion.
    """
    if score is not None and (not _is_number(score) or not math.isfinite(score)):
        raise InvalidInput("score", score, "must be a finite number from 0 to 10 or None")
    if score is not None and not 0 <= score <= 10:
        raise InvalidInput("score", score, "must be a finite number from 0 to 10 or None")
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 0:
        raise InvalidInput("rounds", rounds, "must be an int >= 0")
    if score is None and rounds != 0:
        raise InvalidInput("rounds", rounds, "must be 0 when the agent has no score")
    if score is not None and rounds == 0:
        raise InvalidInput("rounds", rounds, "must be at least 1 when the agent has a score")
    if score is None and promoted:
        raise InvalidInput("promoted", promoted, "an agent without a score cannot be promoted")
    if isinstance(now, bool) or not isinstance(now, int) or now < 0:
        raise InvalidInput("now", now, "must be unix seconds, an int >= 0")
    changes: dict[str, Any] = {"updated_at": now}
    if score is not None:
        n = stats.deliberations_completed + 1
        old = stats.avg_score if n > 1 else float(score)
        average = old + (score - old) / n
        # The true mean lies between the old mean and the new score; keep rounding there.
        changes["avg_score"] = min(max(average, min(old, score)), max(old, score))
        changes["deliberations_completed"] = n
        changes["rounds_completed"] = stats.rounds_completed + rounds
    if promoted:
        changes["rank"] = stats.rank + 1
        changes["wins"] = stats.wins + 1
    return _replace(stats, **changes)


def task_success_ratio(stats: AgentPerformanceStats) -> float | None:
    """completed / (completed + failed); ``None`` before the first submission."""
    total = stats.tasks_completed + stats.tasks_failed
    return stats.tasks_completed / total if total else None


def latency_percentile(stats: AgentPerformanceStats, q: float) -> float | None:
    """The nearest-rank q-th percentile (0 <= q <= 100) of the window; ``None`` if empty."""
    return window_percentile(stats.recent_latencies_ms, q)


def window_percentile(latencies_ms: Sequence[float], q: float) -> float | None:
    """The nearest-rank q-th percentile (0 <= q <= 100) of a latency window; ``None`` if
    empty."""
    if not _is_number(q) or not math.isfinite(q) or not 0 <= q <= 100:
        raise InvalidInput("q", q, "must be a finite number from 0 to 100")
    window = sorted(latencies_ms)
    if not window:
        return None
    position = math.ceil(Fraction(q) * len(window) / 100)
    return window[max(position, 1) - 1]


def latency_p50(stats: AgentPerformanceStats) -> float | None:
    """The median latency of the window (nearest-rank); ``None`` if empty."""
    return latency_percentile(stats, 50)


def latency_p90(stats: AgentPerformanceStats) -> float | None:
    """The 90th percentile latency of the window (nearest-rank); ``None`` if empty."""
    return latency_percentile(stats, 90)


def latency_max(stats: AgentPerformanceStats) -> float | None:
    """The largest latency of the window; ``None`` if empty."""
    return max(stats.recent_latencies_ms, default=None)
