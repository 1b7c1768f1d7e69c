"""The seven achievements of the level-up specification and their conditions.

Each is awarded once. Conditions read only the profile, so they can be checked at any
time (``check_achievements``) and give the same answer when the ledger is replayed.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

from agentladder.domain.levels import LEVELS, Level
from agentladder.domain.profile import AgentProfile
from agentladder.domain.rules import AchievementTable

__all__ = ["Achievement", "achievement_xp", "display_name", "due_achievements", "from_name"]


class Achievement(StrEnum):
    """An achievement's key; its display name is in ``display_name``."""

    FIRST_STEPS = "first_steps"
    PERFECTIONIST = "perfectionist"
    STREAK_MASTER = "streak_master"
    SPEED_DEMON = "speed_demon"
    BUDGET_HERO = "budget_hero"
    SPECIALIST = "specialist"
    EXPERT = "expert"


_NAMES = {
    Achievement.FIRST_STEPS: "First Steps",
    Achievement.PERFECTIONIST: "Perfectionist",
    Achievement.STREAK_MASTER: "Streak Master",
    Achievement.SPEED_DEMON: "Speed Demon",
    Achievement.BUDGET_HERO: "Budget Hero",
    Achievement.SPECIALIST: "Specialist",
    Achievement.EXPERT: "Expert",
}
_BY_NAME = {name: key for key, name in _NAMES.items()}


def display_name(achievement: Achievement) -> str:
    """The specification's name, e.g. ``"Budget Hero"``."""
    return _NAMES[achievement]


def from_name(name: str) -> Achievement:
    """The achievement whose display name is ``name``."""
    return _BY_NAME[name]


def achievement_xp(achievement: Achievement, table: AchievementTable) -> int:
    """The bonus XP ``achievement`` pays."""
    xp: int = getattr(table, achievement.value)
    return xp


def _at_least(level: Level, floor: Level) -> bool:
    return LEVELS.index(level) >= LEVELS.index(floor)


_Condition = Callable[[AgentProfile, AchievementTable], bool]

_CONDITIONS: dict[Achievement, _Condition] = {
    Achievement.FIRST_STEPS: lambda p, t: p.stats.successful_tasks >= 1,
    Achievement.PERFECTIONIST: lambda p, t: p.stats.perfect_tasks >= 1,
    Achievement.STREAK_MASTER: lambda p, t: p.stats.best_streak >= t.streak_master_streak,
    Achievement.SPEED_DEMON: lambda p, t: p.stats.fast_tasks >= t.speed_demon_tasks,
    Achievement.BUDGET_HERO: lambda p, t: p.stats.under_budget_tasks >= t.budget_hero_tasks,
    Achievement.SPECIALIST: lambda p, t: any(
        _at_least(s.level, Level.TRUSTED) for s in p.specializations.values()
    ),
    Achievement.EXPERT: lambda p, t: _at_least(p.level, Level.EXPERT),
}


def due_achievements(profile: AgentProfile, table: AchievementTable) -> tuple[Achievement, ...]:
    """Achievements whose condition ``profile`` meets and that it does not hold yet."""
    held = {record.name for record in profile.achievements}
    return tuple(
        achievement
        for achievement, condition in _CONDITIONS.items()
        if _NAMES[achievement] not in held and condition(profile, table)
    )
