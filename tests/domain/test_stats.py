"""Performance stats: submissions, deliberations, derived figures and the JSON form."""

from __future__ import annotations

import json
import math
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from agentladder.domain.stats import (
    LATENCY_WINDOW,
    AgentPerformanceStats,
    latency_max,
    latency_p50,
    latency_p90,
    latency_percentile,
    record_deliberation,
    record_submission,
    task_success_ratio,
)
from agentladder.errors import InvalidInput

SEED_JSON = """{
  "rank": 3,
  "rounds_completed": 45,
  "avg_score": 7.8,
  "deliberations_completed": 15,
  "wins": 3,
  "updated_at": 1774001607,
  "avg_latency_ms": 28500.0,
  "tasks_completed": 180,
  "tasks_failed": 2,
  "recent_latencies_ms": [25000, 30000]
}"""

FIELDS = [
    "rank",
    "rounds_completed",
    "avg_score",
    "deliberations_completed",
    "wins",
    "updated_at",
    "avg_latency_ms",
    "tasks_completed",
    "tasks_failed",
    "recent_latencies_ms",
]

_latency = st.floats(min_value=0, max_value=1e7)
_score = st.floats(min_value=0, max_value=10)
_stats = st.builds(
    AgentPerformanceStats,
    rank=st.integers(0, 10**6),
    rounds_completed=st.integers(0, 10**9),
    avg_score=_score,
    deliberations_completed=st.integers(0, 10**9),
    wins=st.integers(0, 10**6),
    updated_at=st.integers(0, 2**40),
    avg_latency_ms=_latency,
    tasks_completed=st.integers(0, 10**9),
    tasks_failed=st.integers(0, 10**9),
    recent_latencies_ms=st.lists(_latency, max_size=LATENCY_WINDOW).map(tuple),
)

# The JSON form


def test_fields_are_exactly_the_seeds() -> None:
    """The model has exactly the seed's JSON fields, in the seed's order."""
    assert list(AgentPerformanceStats.model_fields) == FIELDS
    assert list(json.loads(AgentPerformanceStats().model_dump_json())) == FIELDS


def test_seed_json_example_loads() -> None:
    """The seed's example value (without its '...' placeholder) is a valid stats value."""
    stats = AgentPerformanceStats.model_validate_json(SEED_JSON)
    assert stats.rank == 3
    assert stats.recent_latencies_ms == (25000.0, 30000.0)
    assert json.loads(stats.model_dump_json()) == json.loads(SEED_JSON)


def test_new_stats_are_all_zero() -> None:
    """An agent's stats start at rank 0 with every counter and average at 0."""
    stats = AgentPerformanceStats()
    assert stats.rank == stats.wins == stats.tasks_completed == stats.updated_at == 0
    assert stats.recent_latencies_ms == ()


@given(_stats)
def test_stats_round_trip_through_json(stats: AgentPerformanceStats) -> None:
    """model_dump_json then model_validate_json gives back an equal value."""
    assert AgentPerformanceStats.model_validate_json(stats.model_dump_json()) == stats


def test_unknown_fields_are_refused() -> None:
    """A stored value with a field the seed does not have is refused, naming it."""
    with pytest.raises(ValidationError) as caught:
        AgentPerformanceStats.model_validate({"rank": 1, "xp": 10})
    assert "xp" in str(caught.value)


@pytest.mark.parametrize(
    ("field", "value", "shown"),
    [
        ("rank", -1, "-1"),
        ("wins", -3, "-3"),
        ("avg_score", 10.5, "10.5"),
        ("avg_score", math.nan, "nan"),
        ("avg_latency_ms", -1.0, "-1.0"),
        ("recent_latencies_ms", [1.0] * (LATENCY_WINDOW + 1), "[1.0, 1.0"),
        ("recent_latencies_ms", [-7.0], "-7.0"),
    ],
)
def test_invalid_values_are_refused_naming_field_and_value(
    field: str, value: object, shown: str
) -> None:
    """Negative counters, scores outside 0..10 and an oversized window are refused."""
    with pytest.raises(ValidationError) as caught:
        AgentPerformanceStats.model_validate({field: value})
    message = str(caught.value)
    assert field in message
    assert f"input_value={shown}" in message


# Submissions


def test_a_successful_submission_counts_as_completed() -> None:
    """ok=True adds one completed task and its latency."""
    stats = record_submission(AgentPerformanceStats(), latency_ms=120.0, ok=True)
    assert (stats.tasks_completed, stats.tasks_failed) == (1, 0)
    assert stats.recent_latencies_ms == (120.0,)
    assert stats.avg_latency_ms == 120.0


def test_a_failed_submission_records_its_latency_too() -> None:
    """ok=False adds one failed task, and its latency still enters the window."""
    stats = record_submission(AgentPerformanceStats(), latency_ms=100.0, ok=True)
    stats = record_submission(stats, latency_ms=300.0, ok=False)
    assert (stats.tasks_completed, stats.tasks_failed) == (1, 1)
    assert stats.recent_latencies_ms == (100.0, 300.0)
    assert stats.avg_latency_ms == 200.0


def test_the_window_slides_after_64_submissions() -> None:
    """The 65th latency pushes out the first; the average is over the last 64."""
    stats = AgentPerformanceStats()
    for latency in range(65):
        stats = record_submission(stats, latency_ms=float(latency), ok=True)
    assert stats.recent_latencies_ms == tuple(float(x) for x in range(1, 65))
    assert stats.avg_latency_ms == 32.5
    assert stats.tasks_completed == 65


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf])
def test_bad_latency_is_refused_naming_field_and_value(bad: float) -> None:
    """A negative, NaN or infinite latency raises InvalidInput on latency_ms."""
    with pytest.raises(InvalidInput) as caught:
        record_submission(AgentPerformanceStats(), latency_ms=bad, ok=True)
    assert caught.value.field == "latency_ms"
    assert repr(bad) in str(caught.value)


@given(st.lists(st.tuples(_latency, st.booleans()), max_size=150))
def test_window_is_capped_and_average_is_its_mean(submissions: list[tuple[float, bool]]) -> None:
    """The window never exceeds 64, holds the latest latencies, avg is its mean."""
    stats = AgentPerformanceStats()
    for latency, ok in submissions:
        stats = record_submission(stats, latency_ms=latency, ok=ok)
        assert len(stats.recent_latencies_ms) <= LATENCY_WINDOW
        assert stats.avg_latency_ms == statistics.fmean(stats.recent_latencies_ms)
    latest = tuple(latency for latency, _ in submissions[-LATENCY_WINDOW:])
    assert stats.recent_latencies_ms == latest
    assert stats.tasks_completed + stats.tasks_failed == len(submissions)


# Deliberations


def test_a_scored_deliberation_updates_the_incremental_mean() -> None:
    """avg_score is the running mean of deliberation scores; rounds add up."""
    stats = record_deliberation(
        AgentPerformanceStats(), score=6.0, rounds=2, promoted=False, now=10
    )
    stats = record_deliberation(stats, score=9.0, rounds=3, promoted=True, now=20)
    assert stats.avg_score == 7.5
    assert (stats.deliberations_completed, stats.rounds_completed) == (2, 5)
    assert (stats.rank, stats.wins, stats.updated_at) == (1, 1, 20)


def test_a_deliberation_without_score_only_touches_updated_at() -> None:
    """No score: counters and avg_score unchanged, rank unchanged, updated_at set."""
    before = record_deliberation(AgentPerformanceStats(), score=8.0, rounds=1, promoted=True, now=5)
    after = record_deliberation(before, score=None, rounds=0, promoted=False, now=9)
    assert after == before.model_copy(update={"updated_at": 9})


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"score": math.nan}, "score"),
        ({"score": math.inf}, "score"),
        ({"score": -0.1}, "score"),
        ({"score": 10.1}, "score"),
        ({"rounds": -1}, "rounds"),
        ({"rounds": 0}, "rounds"),
        ({"score": None, "rounds": 2}, "rounds"),
        ({"score": None, "rounds": 0, "promoted": True}, "promoted"),
        ({"now": -5}, "now"),
    ],
)
def test_bad_deliberation_input_is_refused(kwargs: dict[str, object], field: str) -> None:
    """Bad scores, rounds, timestamps and a promotion without score raise InvalidInput."""
    arguments: dict[str, object] = {"score": 5.0, "rounds": 1, "promoted": False, "now": 1}
    arguments.update(kwargs)
    with pytest.raises(InvalidInput) as caught:
        record_deliberation(AgentPerformanceStats(), **arguments)  # type: ignore[arg-type]
    assert caught.value.field == field
    assert repr(arguments[field]) in str(caught.value)


_deliberation = st.tuples(st.none() | _score, st.integers(1, 3), st.booleans())


@given(st.lists(_deliberation, max_size=30))
def test_deliberations_keep_rank_monotone_and_avg_in_range(
    deliberations: list[tuple[float | None, int, bool]],
) -> None:
    """Rank never decreases, wins equal promotions, avg_score stays within the scores seen."""
    stats = AgentPerformanceStats()
    seen: list[float] = []
    for now, (score, rounds, promoted) in enumerate(deliberations):
        won = promoted and score is not None
        before = stats
        stats = record_deliberation(
            stats, score=score, rounds=rounds if score is not None else 0, promoted=won, now=now
        )
        assert stats.rank == before.rank + (1 if won else 0)
        assert stats.wins == stats.rank
        if score is not None:
            seen.append(score)
        if seen:
            assert min(seen) <= stats.avg_score <= max(seen)
            assert math.isclose(stats.avg_score, statistics.fmean(seen), abs_tol=1e-9)
    assert stats.deliberations_completed == len(seen)


# Derived figures


def test_task_success_ratio() -> None:
    """completed / (completed + failed), None before any submission."""
    assert task_success_ratio(AgentPerformanceStats()) is None
    stats = AgentPerformanceStats(tasks_completed=180, tasks_failed=20)
    assert task_success_ratio(stats) == 0.9


def test_percentiles_are_nearest_rank() -> None:
    """p50, p90 and max of 1..10 are 5, 9 and 10; q=0 is the smallest."""
    stats = AgentPerformanceStats(recent_latencies_ms=tuple(float(x) for x in range(10, 0, -1)))
    assert (latency_p50(stats), latency_p90(stats), latency_max(stats)) == (5.0, 9.0, 10.0)
    assert latency_percentile(stats, 0) == 1.0
    assert latency_percentile(stats, 100) == 10.0
    assert latency_percentile(stats, 91) == 10.0


def test_percentiles_of_an_empty_window_are_none() -> None:
    """Without any latency there is no percentile and no maximum."""
    stats = AgentPerformanceStats()
    assert latency_p50(stats) is latency_p90(stats) is latency_max(stats) is None


@pytest.mark.parametrize("q", [-1.0, 100.5, math.nan])
def test_bad_percentile_is_refused(q: float) -> None:
    """q outside 0..100 raises InvalidInput on q."""
    with pytest.raises(InvalidInput) as caught:
        latency_percentile(AgentPerformanceStats(recent_latencies_ms=(1.0,)), q)
    assert caught.value.field == "q"
    assert repr(q) in str(caught.value)


@given(st.lists(_latency, min_size=1, max_size=LATENCY_WINDOW), st.floats(0, 100))
def test_percentile_is_an_observed_value_and_monotone(window: list[float], q: float) -> None:
    """A percentile is a latency of the window, and never exceeds a higher percentile."""
    stats = AgentPerformanceStats(recent_latencies_ms=tuple(window))
    value = latency_percentile(stats, q)
    assert value in window
    higher = latency_percentile(stats, min(100.0, q + 10))
    assert value is not None
    assert higher is not None
    assert value <= higher
    assert latency_percentile(stats, 100) == latency_max(stats) == max(window)
