"""A judged task: what the Oracle is told about one piece of an agent's work.

The model validates every field and names the field and the value when it refuses one:
scores from 0 to 10 (finite), non-negative durations, costs, budgets and limits, a task
type matching ``[a-z0-9_.-]{1,64}``, a non-empty contract id without control characters.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agentladder.domain.agents import MODEL_FIELD_MAX, AgentName
from agentladder.domain.rules import Complexity

__all__ = ["CONTRACT_ID_MAX", "TASK_TYPE_PATTERN", "Judgment", "TaskPosition"]

TASK_TYPE_PATTERN = r"^[a-z0-9_.-]{1,64}$"
CONTRACT_ID_MAX = 256
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class Judgment(BaseModel):
    """One judged task of one agent, as submitted to the Oracle."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    agent_id: AgentName
    contract_id: str = Field(min_length=1, max_length=CONTRACT_ID_MAX)
    task_type: str = Field(default="general", pattern=TASK_TYPE_PATTERN)
    score: float | None = Field(default=None, ge=0.0, le=10.0)
    success: bool = True
    retries: int = Field(default=0, ge=0)
    duration_ms: float | None = Field(default=None, ge=0.0)
    cost: float = Field(default=0.0, ge=0.0)
    budget: float | None = Field(default=None, ge=0.0)
    time_limit_ms: float | None = Field(default=None, ge=0.0)
    complexity: Complexity | None = None
    provider: str = Field(default="", max_length=MODEL_FIELD_MAX)
    model: str = Field(default="", max_length=MODEL_FIELD_MAX)
    history: bool = Field(
        default=False,
        description="past work (an import): XP and skill as usual, but no probation",
    )

    @field_validator("contract_id")
    @classmethod
    def _printable(cls, value: str) -> str:
        if not value.strip() or _CONTROL.search(value):
            raise ValueError(
                f"contract_id must be non-blank and free of control characters, not {value!r}"
            )
        return value

    @property
    def under_budget(self) -> bool:
        """Cost below the budget, when a budget is given."""
        return self.budget is not None and self.cost < self.budget

    @property
    def fast(self) -> bool:
        """Duration below the time limit, when both are given."""
        return (
            self.time_limit_ms is not None
            and self.duration_ms is not None
            and self.duration_ms < self.time_limit_ms
        )


class TaskPosition(BaseModel):
    """Where a judged task sits in its agent's history (1-based), overall and in its type.

    A later failed validation of the task uses it to cut the streaks that ran through it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    overall: int = Field(ge=1)
    in_task_type: int = Field(ge=1)
