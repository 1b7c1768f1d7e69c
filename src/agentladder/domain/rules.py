"""The Oracle's rule tables, with the level-up specification's values as defaults.

Every table can be overridden from the ``oracle:`` section of the YAML configuration;
a partial override keeps the defaults of everything it does not name::

    oracle:
      xp:
        task_completed: 12
      levels:
        expert: 3000
      privileges:
        reliable:
          validation_rate: 0.25

XP values are never negative (positive reinforcement only).
"""

from __future__ import annotations

import math
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agentladder.domain.levels import Level, LevelThresholds

__all__ = [
    "AchievementTable",
    "Complexity",
    "LevelPrivileges",
    "MaxComplexity",
    "OracleRules",
    "PrivilegeTable",
    "QualityTier",
    "XPTable",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class QualityTier(BaseModel):
    """Pays ``xp`` when the score is above ``threshold`` (or equal, when ``inclusive``)."""

    model_config = _FROZEN

    event: str
    threshold: float = Field(ge=0.0, le=10.0)
    xp: int = Field(ge=0)
    inclusive: bool = False

    def reached_by(self, score: float) -> bool:
        """Whether ``score`` reaches this tier."""
        return score >= self.threshold if self.inclusive else score > self.threshold


def _default_quality_tiers() -> tuple[QualityTier, ...]:
    return (
        QualityTier(event="quality_above_8", threshold=8.0, xp=15),
        QualityTier(event="quality_above_9", threshold=9.0, xp=25),
        QualityTier(event="perfect_score", threshold=10.0, xp=50, inclusive=True),
    )


class XPTable(BaseModel):
    """XP per event of a judged task. Only the highest quality tier reached pays."""

    model_config = _FROZEN

    task_completed: int = Field(default=10, ge=0)
    first_try: int = Field(default=5, ge=0)
    quality_tiers: tuple[QualityTier, ...] = Field(default_factory=_default_quality_tiers)
    under_budget: int = Field(default=10, ge=0)
    fast_completion: int = Field(default=5, ge=0)
    streak_milestones: dict[int, int] = Field(default_factory=lambda: {5: 25, 10: 50, 25: 100})
    # Past the last milestone, every multiple of this streak length pays streak_repeat_xp.
    streak_repeat_every: int = Field(default=25, ge=0)
    streak_repeat_xp: int = Field(default=100, ge=0)

    @field_validator("streak_milestones")
    @classmethod
    def _positive_milestones(cls, value: dict[int, int]) -> dict[int, int]:
        for length, xp in value.items():
            if length < 1 or xp < 0:
                raise ValueError(
                    f"streak milestone {length}: {xp} must be a length >= 1 and xp >= 0"
                )
        return dict(sorted(value.items()))

    def streak_bonus(self, streak: int) -> int:
        """XP paid when the streak reaches ``streak`` (0 when it is no milestone)."""
        if streak in self.streak_milestones:
            return self.streak_milestones[streak]
        last = max(self.streak_milestones, default=0)
        every = self.streak_repeat_every
        if every and streak > last and streak % every == 0:
            return self.streak_repeat_xp
        return 0


class AchievementTable(BaseModel):
    """Bonus XP of each achievement and the counts their conditions need."""

    model_config = _FROZEN

    first_steps: int = Field(default=10, ge=0)
    perfectionist: int = Field(default=50, ge=0)
    streak_master: int = Field(default=100, ge=0)
    speed_demon: int = Field(default=50, ge=0)
    budget_hero: int = Field(default=75, ge=0)
    specialist: int = Field(default=100, ge=0)
    expert: int = Field(default=200, ge=0)
    streak_master_streak: int = Field(default=25, ge=1)
    speed_demon_tasks: int = Field(default=10, ge=1)
    budget_hero_tasks: int = Field(default=20, ge=1)


class Complexity(StrEnum):
    """How demanding a task is; ordered simple < medium < complex."""

    SIMPLE = "simple"
    MEDIUM = "medium"
    COMPLEX = "complex"


class MaxComplexity(StrEnum):
    """The most demanding task a level may take; ``any`` allows every complexity."""

    SIMPLE = "simple"
    MEDIUM = "medium"
    COMPLEX = "complex"
    ANY = "any"


class LevelPrivileges(BaseModel):
    """What one level may do and how often its work is checked."""

    model_config = _FROZEN

    validation_rate: float = Field(ge=0.0, le=1.0)
    max_complexity: MaxComplexity
    max_retries: int | None = Field(ge=0, description="None means unlimited")
    can_self_correct: bool
    can_mentor: bool

    @field_validator("validation_rate")
    @classmethod
    def _finite(cls, value: float) -> float:
        if math.isnan(value):
            raise ValueError("validation_rate must be a number, not NaN")
        return value


class PrivilegeTable(BaseModel):
    """Privileges per level, from the specification's Level Privileges."""

    model_config = _FROZEN

    rookie: LevelPrivileges = LevelPrivileges(
        validation_rate=1.0,
        max_complexity=MaxComplexity.SIMPLE,
        max_retries=3,
        can_self_correct=False,
        can_mentor=False,
    )
    reliable: LevelPrivileges = LevelPrivileges(
        validation_rate=0.2,
        max_complexity=MaxComplexity.MEDIUM,
        max_retries=5,
        can_self_correct=False,
        can_mentor=False,
    )
    trusted: LevelPrivileges = LevelPrivileges(
        validation_rate=0.05,
        max_complexity=MaxComplexity.COMPLEX,
        max_retries=10,
        can_self_correct=True,
        can_mentor=False,
    )
    expert: LevelPrivileges = LevelPrivileges(
        validation_rate=0.0,
        max_complexity=MaxComplexity.ANY,
        max_retries=None,
        can_self_correct=True,
        can_mentor=True,
    )

    def for_level(self, level: Level) -> LevelPrivileges:
        """The privileges of ``level``."""
        privileges: LevelPrivileges = getattr(self, level.value)
        return privileges


class OracleRules(BaseModel):
    """All rule tables of the Oracle; ``OracleRules()`` is the specification."""

    model_config = _FROZEN

    xp: XPTable = XPTable()
    levels: LevelThresholds = LevelThresholds()
    specialization_levels: LevelThresholds = LevelThresholds(
        rookie=0, reliable=50, trusted=250, expert=1000
    )
    achievements: AchievementTable = AchievementTable()
    privileges: PrivilegeTable = PrivilegeTable()
    accept_unregistered: bool = Field(
        default=False,
        description="judge and award XP to agents nobody configured, registered or judged"
        " before without being told they are new; false: such a judgment is refused, 422"
        " naming agent_id and the closest known ids, unless it says new_agent",
    )
    max_task_types_per_agent: int = Field(
        default=1000, ge=1, le=1_000_000,
        description="distinct task types one agent may be judged in; a judgment in one more"
        " is refused, 422 naming task_type (docs/reliability.md)",
    )  # fmt: skip
    max_task_types: int = Field(
        default=10_000, ge=1, le=10_000_000,
        description="distinct task types the store may hold; a judgment or deliberation in"
        " one more is refused, 422 naming task_type",
    )  # fmt: skip

    @model_validator(mode="after")
    def _tiers_ascending(self) -> OracleRules:
        thresholds = [tier.threshold for tier in self.xp.quality_tiers]
        if thresholds != sorted(thresholds):
            raise ValueError(f"xp.quality_tiers must ascend by threshold, not {thresholds}")
        return self
