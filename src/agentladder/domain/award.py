"""The award process of the level-up specification, as pure folds over a profile.

``apply_judgment`` runs the nine steps in order: task completes, the Oracle's score,
base XP, quality bonus, efficiency bonuses, streak bonus, award the total, level up,
achievements, updated profile. Achievement XP counts toward the overall XP only and can
raise the level, which can unlock a further achievement: ``settle`` repeats until
nothing changes. Levels never go down, also when the thresholds are raised later.
"""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from agentladder.domain.achievements import achievement_xp, display_name, due_achievements
from agentladder.domain.frozen import built, replaced
from agentladder.domain.judgment import Judgment, TaskPosition
from agentladder.domain.levels import LEVELS, Level, LevelThresholds, level_for_xp
from agentladder.domain.profile import (
    AchievementRecord,
    AgentProfile,
    LifetimeStats,
    Specialization,
)
from agentladder.domain.rules import OracleRules
from agentladder.domain.xp import XPLine, streak_after, task_xp_lines

__all__ = [
    "AchievementUnlock",
    "Award",
    "LevelChange",
    "RawAward",
    "SpecializationLevelChange",
    "apply_judgment",
    "apply_raw_award",
    "apply_validation_failure",
    "settle",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid", serialize_by_alias=True)
_NEW_SPECIALIZATION = Specialization()


class LevelChange(BaseModel):
    """A level-up, serialized as ``{"from": ..., "to": ...}``."""

    model_config = _FROZEN

    from_level: Level = Field(
        serialization_alias="from", validation_alias=AliasChoices("from", "from_level")
    )
    to_level: Level = Field(
        serialization_alias="to", validation_alias=AliasChoices("to", "to_level")
    )


class SpecializationLevelChange(LevelChange):
    """A level-up within one task type."""

    task_type: str


class AchievementUnlock(BaseModel):
    """An achievement unlocked by this award, with the XP it paid."""

    model_config = _FROZEN

    name: str
    xp: int = Field(ge=0)

    @property
    def event(self) -> str:
        """The ledger event of this unlock, e.g. ``achievement:budget_hero``."""
        return "achievement:" + self.name.lower().replace(" ", "_")


class Award(BaseModel):
    """What one judgment earned. ``xp_awarded`` is the task XP; achievements are listed apart."""

    model_config = _FROZEN

    xp_awarded: int = Field(ge=0)
    breakdown: tuple[XPLine, ...]
    achievements: tuple[AchievementUnlock, ...]
    level_up: LevelChange | None
    specialization_level_up: SpecializationLevelChange | None
    position: TaskPosition
    profile: AgentProfile

    @property
    def ledger_lines(self) -> tuple[XPLine, ...]:
        """Every line of the xp_history ledger this award writes, task lines first."""
        return self.breakdown + tuple(XPLine(event=a.event, xp=a.xp) for a in self.achievements)

    @property
    def total_xp(self) -> int:
        """Task XP plus achievement XP."""
        return self.xp_awarded + sum(a.xp for a in self.achievements)

    def result_json(self) -> dict[str, Any]:
        """``model_dump(mode="json", exclude={"profile", "position"})``, built directly."""
        level_up = self.level_up
        spec_up = self.specialization_level_up
        return {
            "xp_awarded": self.xp_awarded,
            "breakdown": [{"event": line.event, "xp": line.xp} for line in self.breakdown],
            "achievements": [{"name": a.name, "xp": a.xp} for a in self.achievements],
            "level_up": None
            if level_up is None
            else {"from": level_up.from_level.value, "to": level_up.to_level.value},
            "specialization_level_up": None
            if spec_up is None
            else {
                "from": spec_up.from_level.value,
                "to": spec_up.to_level.value,
                "task_type": spec_up.task_type,
            },
        }


class RawAward(BaseModel):
    """What a raw XP event earned."""

    model_config = _FROZEN

    line: XPLine
    achievements: tuple[AchievementUnlock, ...]
    level_up: LevelChange | None
    profile: AgentProfile


_RANK = {level: rank for rank, level in enumerate(LEVELS)}


def _higher(level: Level, xp: int, thresholds: LevelThresholds) -> Level:
    reached = level_for_xp(xp, thresholds)
    return reached if _RANK[reached] > _RANK[level] else level


def _change(before: Level, after: Level) -> LevelChange | None:
    return None if before == after else LevelChange(from_level=before, to_level=after)


def _levels_settled(profile: AgentProfile, rules: OracleRules) -> AgentProfile:
    """``profile`` with every level brought up to its XP (copied only where one changes)."""
    changed = {}
    for task_type, spec in profile.specializations.items():
        level = _higher(spec.level, spec.xp, rules.specialization_levels)
        if level != spec.level:
            changed[task_type] = replaced(spec, level=level)
    level = _higher(profile.level, profile.xp, rules.levels)
    if not changed and level == profile.level:
        return profile
    return replaced(profile, level=level, specializations={**profile.specializations, **changed})


def settle(
    profile: AgentProfile, rules: OracleRules, awarded_at: str
) -> tuple[AgentProfile, tuple[AchievementUnlock, ...]]:
    """Bring levels up to the XP and award every due achievement, until nothing changes."""
    unlocked: list[AchievementUnlock] = []
    while True:
        profile = _levels_settled(profile, rules)
        due = due_achievements(profile, rules.achievements)
        if not due:
            return profile, tuple(unlocked)
        new = [
            AchievementUnlock(name=display_name(a), xp=achievement_xp(a, rules.achievements))
            for a in due
        ]
        unlocked.extend(new)
        gained = sum(a.xp for a in new)
        records = tuple(AchievementRecord(name=a.name, xp=a.xp, awarded_at=awarded_at) for a in new)
        profile = replaced(
            profile,
            xp=profile.xp + gained,
            achievements=profile.achievements + records,
            stats=replaced(profile.stats, total_xp_earned=profile.stats.total_xp_earned + gained),
        )


def _mean(mean: float, count: int, value: float) -> float:
    """The incremental mean after adding ``value`` as the ``count``-th sample."""
    return mean + (value - mean) / count


def _fold_specialization(spec: Specialization, judgment: Judgment, xp: int) -> Specialization:
    update: dict[str, Any] = {
        "xp": spec.xp + xp,
        "tasks_judged": spec.tasks_judged + 1,
        "tasks_completed": spec.tasks_completed + int(judgment.success),
        "current_streak": streak_after(spec.current_streak, judgment.success),
    }
    if judgment.score is not None:
        scored = spec.scored_tasks + 1
        update["scored_tasks"] = scored
        update["avg_score"] = _mean(spec.avg_score, scored, judgment.score)
        update["best_score"] = max(spec.best_score, judgment.score)
    return replaced(spec, **update)


def _fold_stats(stats: LifetimeStats, judgment: Judgment, xp: int) -> LifetimeStats:
    ok = judgment.success
    streak = streak_after(stats.current_streak, ok)
    total = stats.total_tasks + 1
    successful = stats.successful_tasks + int(ok)
    update: dict[str, Any] = {
        "total_tasks": total,
        "total_xp_earned": stats.total_xp_earned + xp,
        "total_cost_incurred": stats.total_cost_incurred + judgment.cost,
        "successful_tasks": successful,
        "success_rate": successful / total,
        "current_streak": streak,
        "best_streak": max(stats.best_streak, streak),
        "fast_tasks": stats.fast_tasks + int(ok and judgment.fast),
        "under_budget_tasks": stats.under_budget_tasks + int(ok and judgment.under_budget),
        "perfect_tasks": stats.perfect_tasks + int(ok and judgment.score == 10.0),
    }
    if judgment.score is not None:
        update["scored_tasks"] = stats.scored_tasks + 1
        update["average_score"] = _mean(stats.average_score, stats.scored_tasks + 1, judgment.score)
    return replaced(stats, **update)


def apply_judgment(
    profile: AgentProfile, judgment: Judgment, rules: OracleRules, awarded_at: str
) -> Award:
    """Fold one judged task into ``profile``: itemized task XP, levels, achievements.
    Each model that changes is built once, from the values it keeps (``domain/frozen.py``)."""
    lines = task_xp_lines(judgment, profile.stats.current_streak, rules.xp)
    xp = sum(line.xp for line in lines)
    spec_before = profile.specializations.get(judgment.task_type, _NEW_SPECIALIZATION)
    spec_after = _fold_specialization(spec_before, judgment, xp)
    folded = replaced(
        profile,
        xp=profile.xp + xp,
        stats=_fold_stats(profile.stats, judgment, xp),
        specializations={**profile.specializations, judgment.task_type: spec_after},
    )
    settled, unlocked = settle(folded, rules, awarded_at)
    spec_level = settled.specializations[judgment.task_type].level
    spec_change = None
    if spec_level != spec_before.level:
        spec_change = SpecializationLevelChange(
            task_type=judgment.task_type, from_level=spec_before.level, to_level=spec_level
        )
    return built(
        Award,
        xp_awarded=xp,
        breakdown=lines,
        achievements=unlocked,
        level_up=_change(profile.level, settled.level),
        specialization_level_up=spec_change,
        position=built(
            TaskPosition, overall=settled.stats.total_tasks, in_task_type=spec_after.tasks_judged
        ),
        profile=settled,
    )


def apply_raw_award(
    profile: AgentProfile, event: str, xp: int, rules: OracleRules, awarded_at: str
) -> RawAward:
    """Award ``xp`` for a named event outside a judged task (overall XP only)."""
    line = XPLine(event=event, xp=xp)
    raised = profile.model_copy(
        update={
            "xp": profile.xp + line.xp,
            "stats": profile.stats.model_copy(
                update={"total_xp_earned": profile.stats.total_xp_earned + line.xp}
            ),
        }
    )
    settled, unlocked = settle(raised, rules, awarded_at)
    return RawAward(
        line=line,
        achievements=unlocked,
        level_up=_change(profile.level, settled.level),
        profile=settled,
    )


def apply_validation_failure(
    profile: AgentProfile, judgment: Judgment, position: TaskPosition
) -> AgentProfile:
    """A Sentinel found a judged task bad: count it as failed, take back no XP.

    The task no longer counts as a success (success rate, the type's tasks_completed,
    the fast, under-budget and perfect counters), and every streak that ran through it
    is cut to the successes after it. XP, levels and achievements stay (positive-only).
    A task that was judged failed already changes nothing.
    """
    if not judgment.success:
        return profile
    stats = profile.stats
    successful = stats.successful_tasks - 1
    stats = stats.model_copy(
        update={
            "successful_tasks": successful,
            "success_rate": successful / stats.total_tasks,
            "current_streak": min(stats.current_streak, stats.total_tasks - position.overall),
            "fast_tasks": stats.fast_tasks - int(judgment.fast),
            "under_budget_tasks": stats.under_budget_tasks - int(judgment.under_budget),
            "perfect_tasks": stats.perfect_tasks - int(judgment.score == 10.0),
        }
    )
    spec = profile.specializations[judgment.task_type]
    spec = spec.model_copy(
        update={
            "tasks_completed": spec.tasks_completed - 1,
            "current_streak": min(spec.current_streak, spec.tasks_judged - position.in_task_type),
        }
    )
    return profile.model_copy(
        update={
            "stats": stats,
            "specializations": {**profile.specializations, judgment.task_type: spec},
        }
    )
