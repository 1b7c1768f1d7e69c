"""Task XP: base, first try, quality tier, efficiency and streak bonuses, itemized."""

from __future__ import annotations

from typing import Any

import pytest

from agentladder.domain.rules import XPTable
from agentladder.domain.xp import task_xp_lines
from tests.domain.oracle_helpers import judgment, run

TABLE = XPTable()


def lines(**fields: Any) -> list[tuple[str, int]]:
    return [(line.event, line.xp) for line in task_xp_lines(judgment(**fields), 0, TABLE)]


def test_specification_example_pays_35_itemized() -> None:
    """One retry, score 8.5, cost 0.05 under a budget of 0.10: 10 base + 15 quality + 10 budget."""
    award = run([judgment(retries=1, score=8.5, cost=0.05, budget=0.10, duration_ms=5000)])[0]
    assert award.xp_awarded == 35
    assert [(line.event, line.xp) for line in award.breakdown] == [
        ("task_completed", 10),
        ("quality_above_8", 15),
        ("under_budget", 10),
    ]


def test_first_try_success_pays_five_more() -> None:
    """Success with zero retries adds first_try +5 after the base."""
    assert lines(score=5.0) == [("task_completed", 10), ("first_try", 5)]


@pytest.mark.parametrize(
    ("score", "expected"),
    [
        (8.0, None),
        (8.01, ("quality_above_8", 15)),
        (9.0, ("quality_above_8", 15)),
        (9.5, ("quality_above_9", 25)),
        (9.999, ("quality_above_9", 25)),
        (10.0, ("perfect_score", 50)),
    ],
)
def test_only_the_highest_quality_tier_pays(score: float, expected: tuple[str, int] | None) -> None:
    """Scores above 8 pay 15, above 9 pay 25, exactly 10 pays 50; never two tiers at once."""
    quality = [line for line in lines(score=score, retries=1) if line[0] != "task_completed"]
    assert quality == ([] if expected is None else [expected])


def test_no_score_pays_no_quality_bonus() -> None:
    """A task judged without a score earns base XP only."""
    assert lines(score=None, retries=2) == [("task_completed", 10)]


@pytest.mark.parametrize(
    ("cost", "budget", "paid"), [(0.05, 0.10, True), (0.10, 0.10, False), (0.2, 0.1, False)]
)
def test_under_budget_needs_cost_strictly_below_budget(
    cost: float, budget: float, paid: bool
) -> None:
    """under_budget pays 10 only when cost < budget."""
    assert (("under_budget", 10) in lines(cost=cost, budget=budget)) is paid


def test_no_budget_no_budget_bonus() -> None:
    """Without a budget the under-budget rule cannot pay."""
    assert all(event != "under_budget" for event, _ in lines(cost=0.0))


@pytest.mark.parametrize(
    ("duration", "limit", "paid"),
    [(4999.0, 5000.0, True), (5000.0, 5000.0, False), (None, 5000.0, False), (10.0, None, False)],
)
def test_fast_needs_duration_below_the_time_limit(
    duration: float | None, limit: float | None, paid: bool
) -> None:
    """fast_completion pays 5 only when both are given and duration < time limit."""
    got = lines(duration_ms=duration, time_limit_ms=limit)
    assert (("fast_completion", 5) in got) is paid


def test_failure_pays_nothing_whatever_else_is_true() -> None:
    """A failed task pays 0 XP even with a perfect score, under budget and fast."""
    assert (
        lines(success=False, score=10.0, cost=0.0, budget=1.0, duration_ms=1, time_limit_ms=9) == []
    )


def test_streak_milestones_pay_at_5_10_25_and_every_25_after() -> None:
    """Consecutive successes pay 25 at 5, 50 at 10, 100 at 25, 100 again at 50 and 75."""
    awards = run([judgment(i, retries=1, score=5.0) for i in range(80)])
    paid = {
        i + 1: line.xp
        for i, award in enumerate(awards)
        for line in award.breakdown
        if line.event.startswith("streak_")
    }
    assert paid == {5: 25, 10: 50, 25: 100, 50: 100, 75: 100}


def test_failure_resets_the_streak() -> None:
    """Four successes, a failure, then five more successes: the milestone comes at the fifth."""
    items = [judgment(i, retries=1) for i in range(4)]
    items.append(judgment(4, success=False))
    items += [judgment(5 + i, retries=1) for i in range(5)]
    awards = run(items)
    assert awards[4].xp_awarded == 0
    assert awards[4].profile.stats.current_streak == 0
    streak_events = [
        (i, line.event)
        for i, a in enumerate(awards)
        for line in a.breakdown
        if "streak" in line.event
    ]
    assert streak_events == [(9, "streak_5")]


def test_rules_configured_to_zero_write_no_line() -> None:
    """A rule whose XP is configured to 0 leaves no line in the breakdown."""
    table = XPTable(first_try=0)
    got = task_xp_lines(judgment(score=5.0), 0, table)
    assert [line.event for line in got] == ["task_completed"]
