"""Level privileges and the Sentinels' sampling rule.

With a task type, an agent's standing is its level in that specialization (an expert
overall who is new to a task type is a rookie at it); without one, its overall level.
An agent the Oracle has never judged is a rookie.
"""

from __future__ import annotations

import math

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from agentladder.domain.levels import Level
from agentladder.domain.profile import AgentProfile
from agentladder.domain.rules import Complexity, MaxComplexity, OracleRules
from agentladder.errors import InvalidInput

__all__ = [
    "Privileges",
    "SamplingDecision",
    "TaskAllowance",
    "allows_complexity",
    "privileges_for",
    "sampling_decision",
    "standing",
    "task_allowance",
]

_ORDER = (Complexity.SIMPLE, Complexity.MEDIUM, Complexity.COMPLEX)


class Privileges(BaseModel):
    """What an agent may do at its standing, and how often its work is checked."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    level: Level
    task_type: str | None
    validation_rate: float
    max_complexity: MaxComplexity
    max_retries: int | None = Field(description="None means unlimited")
    can_self_correct: bool
    can_mentor: bool
    effective_rate: float | None = Field(
        default=None,
        description="the rate the Sentinels validate at now (validation_rate is the level's)",
    )
    rate_reason: str | None = Field(
        default=None, description="level, audit, probation or model_change"
    )
    clearance_left: int | None = Field(
        default=None, description="passed validations still needed, while on probation"
    )


def standing(profile: AgentProfile | None, task_type: str | None = None) -> Level:
    """The level that decides privileges: the specialization's with a task type."""
    if profile is None:
        return Level.ROOKIE
    if task_type is None:
        return profile.level
    spec = profile.specializations.get(task_type)
    return Level.ROOKIE if spec is None else spec.level


def privileges_for(
    profile: AgentProfile | None, rules: OracleRules, task_type: str | None = None
) -> Privileges:
    """The privileges of ``profile`` (overall, or for ``task_type``)."""
    level = standing(profile, task_type)
    table = rules.privileges.for_level(level)
    return Privileges(level=level, task_type=task_type, **table.model_dump())


def allows_complexity(max_complexity: MaxComplexity, complexity: Complexity) -> bool:
    """Whether a level allowed up to ``max_complexity`` may take a ``complexity`` task."""
    if max_complexity is MaxComplexity.ANY:
        return True
    return _ORDER.index(complexity) <= _ORDER.index(Complexity(max_complexity.value))


class TaskAllowance(BaseModel):
    """Whether an agent may take a task, and with how many retries (the orchestrator's view)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    allowed: bool
    reason: str | None = Field(description="why not, when not allowed")
    level: Level
    task_type: str | None
    complexity: Complexity | None
    max_retries: int | None = Field(description="None means unlimited")
    can_self_correct: bool
    can_mentor: bool


def task_allowance(
    profile: AgentProfile | None,
    rules: OracleRules,
    task_type: str | None = None,
    complexity: Complexity | None = None,
) -> TaskAllowance:
    """May the agent take a task of ``complexity`` (any, when None) in ``task_type``?"""
    privileges = privileges_for(profile, rules, task_type)
    allowed = complexity is None or allows_complexity(privileges.max_complexity, complexity)
    reason = None
    if not allowed:
        reason = (
            f"{privileges.level.value} agents take tasks up to"
            f" {privileges.max_complexity.value}, not {complexity}"
        )
    return TaskAllowance(
        allowed=allowed,
        reason=reason,
        level=privileges.level,
        task_type=task_type,
        complexity=complexity,
        max_retries=privileges.max_retries,
        can_self_correct=privileges.can_self_correct,
        can_mentor=privileges.can_mentor,
    )


class SamplingDecision(BaseModel):
    """A Sentinel's decision whether to validate one output."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    validate_output: bool = Field(
        validation_alias=AliasChoices("validate_output", "validate"),
        serialization_alias="validate",
        description="validate this output (``validate`` in JSON)",
    )
    reason: str = Field(
        description="requested, probation, model_change (every output), sampled, skipped_by_level"
    )
    rate: float = Field(description="the effective rate the decision was drawn at")
    level: Level
    level_rate: float | None = Field(default=None, description="the level's rate")
    rate_reason: str = Field(default="level", description="why the rate is what it is")
    clearance_left: int | None = Field(
        default=None, description="passed validations still needed, while on probation"
    )


_EVERY_OUTPUT = frozenset({"probation", "model_change"})


def sampling_decision(
    level: Level,
    rate: float,
    draw: float,
    force: bool,
    *,
    level_rate: float | None = None,
    rate_reason: str = "level",
    clearance_left: int | None = None,
) -> SamplingDecision:
    """Validate on request, or when the uniform ``draw`` in [0, 1) falls below ``rate``.

    A rate of 0 (expert) is never sampled; only ``force`` validates it. On probation
    (``rate_reason`` probation or model_change, rate 1) every output is validated and the
    reason says why.
    """
    if not (math.isfinite(draw) and 0.0 <= draw < 1.0):
        raise InvalidInput("draw", draw, "must be a number in [0, 1)")
    validate = force or draw < rate
    if force:
        reason = "requested"
    elif rate_reason in _EVERY_OUTPUT:
        reason = rate_reason
    else:
        reason = "sampled" if validate else "skipped_by_level"
    return SamplingDecision(
        validate_output=validate, reason=reason, rate=rate, level=level,
        level_rate=rate if level_rate is None else level_rate, rate_reason=rate_reason,
        clearance_left=clearance_left,
    )  # fmt: skip
