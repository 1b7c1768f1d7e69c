"""A failed Sentinel validation counts the task as failed, takes back no XP."""

from __future__ import annotations

from agentladder.domain.award import apply_validation_failure
from tests.domain.oracle_helpers import judgment, run


def test_failed_validation_cuts_streaks_and_success_but_keeps_xp() -> None:
    """Six successes; the third fails validation: streak 3, 5/6 success, XP unchanged."""
    items = [judgment(i, cost=0.01, budget=0.02) for i in range(6)]
    awards = run(items)
    last = awards[-1].profile
    after = apply_validation_failure(last, items[2], awards[2].position)
    assert after.xp == last.xp
    assert after.level == last.level
    assert after.achievements == last.achievements
    assert after.stats.current_streak == 3
    assert after.stats.successful_tasks == 5
    assert after.stats.success_rate == 5 / 6
    assert after.stats.under_budget_tasks == 5
    spec = after.specializations["text_analysis"]
    assert spec.tasks_completed == 5
    assert spec.current_streak == 3


def test_failed_validation_of_the_latest_task_resets_the_streak() -> None:
    """Invalidating the most recent task leaves a streak of 0."""
    items = [judgment(i) for i in range(4)]
    awards = run(items)
    after = apply_validation_failure(awards[-1].profile, items[-1], awards[-1].position)
    assert after.stats.current_streak == 0
    assert after.specializations["text_analysis"].current_streak == 0


def test_streak_in_another_task_type_is_cut_only_overall() -> None:
    """A task of type A failing validation leaves type B's own streak alone."""
    items = [judgment(0, task_type="a"), judgment(1, task_type="b"), judgment(2, task_type="b")]
    awards = run(items)
    after = apply_validation_failure(awards[-1].profile, items[0], awards[0].position)
    assert after.stats.current_streak == 2
    assert after.specializations["b"].current_streak == 2
    assert after.specializations["a"].current_streak == 0


def test_validation_failure_of_a_failed_task_changes_nothing() -> None:
    """A task judged failed already is not counted twice."""
    items = [judgment(0), judgment(1, success=False)]
    awards = run(items)
    assert apply_validation_failure(awards[-1].profile, items[1], awards[1].position) == (
        awards[-1].profile
    )
