"""Levels and achievements: thresholds, once-only level-ups, achievements unlocking each other."""

from __future__ import annotations

import pytest

from agentladder.domain.award import apply_raw_award, settle
from agentladder.domain.levels import Level, LevelThresholds, level_for_xp, level_number
from agentladder.domain.profile import AgentProfile, Specialization, new_profile
from agentladder.domain.rules import OracleRules
from tests.domain.oracle_helpers import NOW, RULES, judgment, run


@pytest.mark.parametrize(
    ("xp", "level"),
    [
        (0, "rookie"),
        (99, "rookie"),
        (100, "reliable"),
        (499, "reliable"),
        (500, "trusted"),
        (1999, "trusted"),
        (2000, "expert"),
        (10**9, "expert"),
    ],
)
def test_overall_levels_at_0_100_500_2000(xp: int, level: str) -> None:
    """Overall level thresholds are the specification's 0/100/500/2000 XP."""
    assert level_for_xp(xp, RULES.levels) == Level(level)


@pytest.mark.parametrize(
    ("xp", "level"), [(49, "rookie"), (50, "reliable"), (250, "trusted"), (1000, "expert")]
)
def test_specialization_levels_use_half_the_thresholds(xp: int, level: str) -> None:
    """Specialization thresholds are 0/50/250/1000 XP."""
    assert level_for_xp(xp, RULES.specialization_levels) == Level(level)


def test_level_numbers_follow_the_specification() -> None:
    """Rookie is level 1 and expert level 4."""
    assert [level_number(lv) for lv in Level] == [1, 2, 3, 4]


def test_specification_example_profile_levels() -> None:
    """280 XP in image_generation is trusted, 170 in text_analysis reliable, 450 overall too."""
    profile = AgentProfile(
        id="gemini-2.0-flash",
        provider="google",
        model="gemini-2.0-flash",
        xp=450,
        specializations={
            "image_generation": Specialization(xp=280),
            "text_analysis": Specialization(xp=170),
        },
    )
    levels_only = OracleRules(achievements=RULES.achievements.model_copy(update={"specialist": 0}))
    settled, _ = settle(profile, levels_only, NOW)
    assert settled.level is Level.RELIABLE
    assert settled.specializations["image_generation"].level is Level.TRUSTED
    assert settled.specializations["text_analysis"].level is Level.RELIABLE


def test_rookie_climbs_to_expert_each_level_up_reported_once() -> None:
    """Level-ups rookie→reliable→trusted→expert each appear on exactly one award."""
    awards = run([judgment(i, score=9.5, task_type=f"t{i % 7}") for i in range(120)])
    ups = [(a.level_up.from_level, a.level_up.to_level) for a in awards if a.level_up]
    assert [to for _, to in ups] == [Level.RELIABLE, Level.TRUSTED, Level.EXPERT]
    assert all(a.profile.level is Level.EXPERT for a in awards[-3:])
    before = [awards[i - 1].profile.xp for i, a in enumerate(awards) if a.level_up]
    after = [a.profile.xp for a in awards if a.level_up]
    for (frm, to), xp_before, xp_after in zip(ups, before, after, strict=True):
        assert xp_before < RULES.levels.xp_for(to) <= xp_after
        assert RULES.levels.xp_for(frm) <= xp_before


def test_level_up_serializes_as_from_and_to() -> None:
    """A level change is sent as {"from": ..., "to": ...}."""
    raw = apply_raw_award(new_profile("a1"), "bonus", 100, RULES, NOW)
    assert raw.level_up is not None
    assert raw.level_up.model_dump(mode="json") == {"from": "rookie", "to": "reliable"}


def test_expert_achievement_is_unlocked_by_the_xp_of_other_achievements() -> None:
    """Achievement XP can raise the level, which unlocks Expert in the same award."""
    profile = new_profile("a1").model_copy(update={"xp": 1985})
    profile = profile.model_copy(
        update={"stats": profile.stats.model_copy(update={"total_xp_earned": 1985})}
    )
    award = run([judgment(0, score=5.0, retries=1)], profile)[0]
    names = [a.name for a in award.achievements]
    assert names == ["First Steps", "Expert"]
    assert award.profile.xp == 1985 + 10 + 10 + 200
    assert award.level_up is not None
    assert award.level_up.to_level is Level.EXPERT


def test_specialist_unlocks_when_a_specialization_reaches_trusted() -> None:
    """Reaching 250 XP in one task type unlocks Specialist (+100 overall XP only)."""
    awards = run([judgment(i, score=9.5, task_type="sql") for i in range(20)])
    unlocked = [(i, a.name) for i, aw in enumerate(awards) for a in aw.achievements]
    index = next(i for i, name in unlocked if name == "Specialist")
    assert awards[index].specialization_level_up is not None
    assert awards[index].profile.specializations["sql"].level is Level.TRUSTED
    assert awards[index].profile.specializations["sql"].xp < awards[index].profile.xp


def test_achievements_are_awarded_once() -> None:
    """First Steps pays once, however many tasks follow."""
    awards = run([judgment(i) for i in range(30)])
    firsts = [a for aw in awards for a in aw.achievements if a.name == "First Steps"]
    assert len(firsts) == 1
    assert [r.name for r in awards[-1].profile.achievements].count("First Steps") == 1


@pytest.mark.parametrize(
    ("name", "fields", "count"),
    [
        ("Perfectionist", {"score": 10.0}, 1),
        ("Speed Demon", {"duration_ms": 10.0, "time_limit_ms": 100.0}, 10),
        ("Budget Hero", {"cost": 0.01, "budget": 0.02}, 20),
        ("Streak Master", {}, 25),
    ],
)
def test_each_achievement_unlocks_exactly_at_its_condition(
    name: str, fields: dict[str, float], count: int
) -> None:
    """Perfectionist at a 10.0, Speed Demon at 10 fast, Budget Hero 20 under budget, streak 25."""
    awards = run([judgment(i, **fields) for i in range(count + 3)])
    at = [i + 1 for i, aw in enumerate(awards) for a in aw.achievements if a.name == name]
    assert at == [count]


def test_failed_tasks_count_toward_no_achievement() -> None:
    """Failed tasks that were fast and under budget do not count for Speed Demon or Budget Hero."""
    items = [
        judgment(i, success=False, score=10.0, duration_ms=1, time_limit_ms=9, cost=0, budget=1)
        for i in range(25)
    ]
    awards = run(items)
    assert all(not a.achievements for a in awards)
    assert awards[-1].profile.xp == 0


def test_levels_never_go_down_when_thresholds_are_raised() -> None:
    """An expert stays expert under a config that raises the expert threshold."""
    profile = new_profile("a1").model_copy(update={"xp": 2500, "level": Level.EXPERT})
    harder = OracleRules(levels=LevelThresholds(reliable=1000, trusted=5000, expert=9000))
    settled, _ = settle(profile, harder, NOW)
    assert settled.level is Level.EXPERT
