"""An agent's Oracle profile: XP, level, specializations, achievements, lifetime stats.

The fields are the level-up specification's ``AgentProfile`` in snake_case, plus the
counters its rules need (successful, scored, fast and under-budget tasks, streaks).
``xp`` and ``stats.total_xp_earned`` are always equal: XP is never spent or taken back.
``probation`` (``domain/probation.py``) is the Sentinels' memory of failures, per task
type and overall (``*``); it is left out of the profile's JSON while empty.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from agentladder.domain.levels import Level

__all__ = [
    "AchievementRecord",
    "AgentProfile",
    "LifetimeStats",
    "Probation",
    "ProbationCause",
    "Specialization",
    "new_profile",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class Specialization(BaseModel):
    """An agent's standing in one task type."""

    model_config = _FROZEN

    xp: int = Field(default=0, ge=0)
    level: Level = Level.ROOKIE
    tasks_completed: int = Field(default=0, ge=0, description="successful tasks of this type")
    avg_score: float = 0.0
    best_score: float = 0.0
    current_streak: int = Field(default=0, ge=0)
    tasks_judged: int = Field(default=0, ge=0, description="all judged tasks of this type")
    scored_tasks: int = Field(default=0, ge=0)


class AchievementRecord(BaseModel):
    """An achievement an agent holds."""

    model_config = _FROZEN

    name: str
    xp: int = Field(ge=0)
    awarded_at: str


class LifetimeStats(BaseModel):
    """Counters over the agent's whole history."""

    model_config = _FROZEN

    total_tasks: int = Field(default=0, ge=0)
    total_xp_earned: int = Field(default=0, ge=0)
    total_cost_incurred: float = Field(default=0.0, ge=0.0)
    average_score: float = 0.0
    success_rate: float = 0.0
    successful_tasks: int = Field(default=0, ge=0)
    scored_tasks: int = Field(default=0, ge=0)
    fast_tasks: int = Field(default=0, ge=0)
    under_budget_tasks: int = Field(default=0, ge=0)
    perfect_tasks: int = Field(default=0, ge=0)
    current_streak: int = Field(default=0, ge=0)
    best_streak: int = Field(default=0, ge=0)


class ProbationCause(StrEnum):
    """What started a probation."""

    FAILED_VALIDATION = "failed_validation"
    FAILED_JUDGMENT = "failed_judgment"
    MODEL_CHANGE = "model_change"


class Probation(BaseModel):
    """The last probation of one stream (a task type, or ``*`` for all tasks): its cause,
    how many tasks the stream had judged when it started, and the consecutive passed
    validations of tasks judged after that. Whether it is still on is the clearance's
    call (``domain/probation.py``)."""

    model_config = _FROZEN

    cause: ProbationCause
    since: int = Field(ge=0)
    passes: int = Field(default=0, ge=0)


class AgentProfile(BaseModel):
    """The Oracle's view of one agent."""

    model_config = _FROZEN

    id: str
    provider: str = ""
    model: str = ""
    xp: int = Field(default=0, ge=0)
    level: Level = Level.ROOKIE
    specializations: dict[str, Specialization] = Field(default_factory=dict)
    achievements: tuple[AchievementRecord, ...] = ()
    stats: LifetimeStats = LifetimeStats()
    probation: dict[str, Probation] = Field(
        default_factory=dict,
        exclude_if=lambda streams: not streams,
        description="per task type and overall (*): the last probation, while any",
    )

    def has_achievement(self, name: str) -> bool:
        """Whether the agent already holds the achievement ``name``."""
        return any(record.name == name for record in self.achievements)


def new_profile(agent_id: str, provider: str = "", model: str = "") -> AgentProfile:
    """The profile of an agent the Oracle has never judged: rookie, 0 XP."""
    return AgentProfile(id=agent_id, provider=provider, model=model)
