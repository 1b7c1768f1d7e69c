"""A judged task: what the Oracle is told about one piece of an agent's work.

The model validates every field and names the field and the value when it refuses one:
scores from 0 to 10 (finite), non-negative durations, costs, budgets and limits, a task
type matching ``[a-z0-9_.-]{1,64}``, a non-blank contract id, and a contract id, provider
and model without invisible characters (``domain/text.py``), a judge's name matching
``JUDGE_PATTERN`` and a time of judging with its time zone.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from agentladder.domain.agents import MODEL_FIELD_MAX, AgentName
from agentladder.domain.rules import Complexity
from agentladder.domain.text import Visible

__all__ = [
    "CONTRACT_ID_MAX",
    "JUDGE_PATTERN",
    "OPTIONAL_FIELDS",
    "TASK_TYPE_PATTERN",
    "Judgment",
    "TaskPosition",
]

TASK_TYPE_PATTERN = r"^[a-z0-9_.-]{1,64}$"
CONTRACT_ID_MAX = 256
JUDGE_PATTERN = r"^[A-Za-z0-9_.:/@+-]{1,128}$"
"""A judge's name: a model (``openai/gpt-4o``), a person, a scorer, a token's name."""
OPTIONAL_FIELDS = frozenset({"judge", "observed_at"})
"""Fields stored and fingerprinted only when given: a judgment without them is stored as
it was before they existed (a file imported then is all duplicates when imported again)."""


class Judgment(BaseModel):
    """One judged task of one agent, as submitted to the Oracle."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    agent_id: AgentName
    contract_id: Annotated[str, Field(min_length=1, max_length=CONTRACT_ID_MAX), Visible]
    task_type: str = Field(default="general", pattern=TASK_TYPE_PATTERN)
    score: float | None = Field(default=None, ge=0.0, le=10.0)
    success: bool = True
    retries: int = Field(default=0, ge=0)
    duration_ms: float | None = Field(default=None, ge=0.0)
    cost: float = Field(default=0.0, ge=0.0)
    budget: float | None = Field(default=None, ge=0.0)
    time_limit_ms: float | None = Field(default=None, ge=0.0)
    complexity: Complexity | None = None
    provider: Annotated[str, Field(max_length=MODEL_FIELD_MAX), Visible] = ""
    model: Annotated[str, Field(max_length=MODEL_FIELD_MAX), Visible] = ""
    history: bool = Field(
        default=False,
        description="past work (an import): XP as usual, no probation; its skill evidence"
        " placed by the next fit",
    )
    judge: str | None = Field(
        default=None,
        pattern=JUDGE_PATTERN,
        description="who scored it (a model, a person, a scorer): the skill model learns each"
        " judge's noise and leniency; default: the server's judge when it scored, else"
        " 'oracle' (an import: its scorer or 'import')",
    )
    observed_at: AwareDatetime | None = Field(
        default=None,
        description="when the work was judged (ISO 8601 with its time zone, not in the"
        " future); the skill model's time (docs/skill.md, 'Time'); default: when received",
    )

    @field_validator("contract_id")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
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
