"""Invariants of the award fold, over random judgment sequences (hypothesis)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentladder.domain.award import apply_judgment
from agentladder.domain.judgment import Judgment
from agentladder.domain.levels import LEVELS
from agentladder.domain.profile import new_profile
from tests.domain.oracle_helpers import NOW, RULES

scores = st.none() | st.floats(min_value=0.0, max_value=10.0, allow_nan=False)
maybe_ms = st.none() | st.floats(min_value=0.0, max_value=1e6, allow_nan=False)


@st.composite
def judgments(draw: st.DrawFn) -> list[Judgment]:
    count = draw(st.integers(min_value=1, max_value=40))
    return [
        Judgment(
            agent_id="a1",
            contract_id=f"c{i}",
            task_type=draw(st.sampled_from(["sql", "poetry", "vision"])),
            score=draw(scores),
            success=draw(st.booleans()),
            retries=draw(st.integers(min_value=0, max_value=3)),
            duration_ms=draw(maybe_ms),
            time_limit_ms=draw(maybe_ms),
            cost=draw(st.floats(min_value=0.0, max_value=5.0, allow_nan=False)),
            budget=draw(st.none() | st.floats(min_value=0.0, max_value=5.0, allow_nan=False)),
        )
        for i in range(count)
    ]


@given(judgments())
def test_xp_and_levels_never_decrease_and_awards_are_never_negative(items: list[Judgment]) -> None:
    """Every award is >= 0; XP, overall level and every specialization level only rise."""
    profile = new_profile("a1")
    for item in items:
        award = apply_judgment(profile, item, RULES, NOW)
        after = award.profile
        assert award.xp_awarded >= 0
        assert all(line.xp >= 0 for line in award.ledger_lines)
        assert after.xp == profile.xp + award.total_xp
        assert LEVELS.index(after.level) >= LEVELS.index(profile.level)
        for task_type, spec in profile.specializations.items():
            new = after.specializations[task_type]
            assert new.xp >= spec.xp
            assert LEVELS.index(new.level) >= LEVELS.index(spec.level)
        if not item.success:
            assert award.xp_awarded == 0
            assert after.stats.current_streak == 0
        profile = after


@given(judgments())
def test_the_same_input_gives_the_same_award(items: list[Judgment]) -> None:
    """Folding the same sequence twice gives identical awards and profiles."""

    def fold() -> list[str]:
        profile = new_profile("a1")
        out = []
        for item in items:
            award = apply_judgment(profile, item, RULES, NOW)
            out.append(award.model_dump_json())
            profile = award.profile
        return out

    assert fold() == fold()


@given(judgments())
def test_profile_totals_agree_with_the_ledger(items: list[Judgment]) -> None:
    """xp equals total_xp_earned equals the sum of every ledger line; counters add up."""
    profile = new_profile("a1")
    ledger = 0
    for item in items:
        award = apply_judgment(profile, item, RULES, NOW)
        ledger += sum(line.xp for line in award.ledger_lines)
        profile = award.profile
    stats = profile.stats
    assert profile.xp == stats.total_xp_earned == ledger
    assert stats.total_tasks == len(items)
    assert stats.successful_tasks == sum(item.success for item in items)
    assert sum(s.tasks_judged for s in profile.specializations.values()) == len(items)
    assert (
        sum(s.xp for s in profile.specializations.values())
        + sum(a.xp for a in profile.achievements)
        == profile.xp
    )
