"""What a deliberation leaves behind: rounds of proposals with their evaluations and scores.

The record is what ``GET /deliberation/{id}`` shows and what the store keeps. The
``ranking`` and ``judgments`` parts track the post-completion side effects, which never
block or fail the deliberation itself.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from agentladder.domain.deliberation import DeliberationRequest, Excluded
from agentladder.domain.ranking import Submission
from agentladder.domain.routing.spec import Routing
from agentladder.domain.rules import Complexity

__all__ = [
    "DeliberationRecord",
    "DeliberationStatus",
    "EvaluationRecord",
    "ProposalRecord",
    "RoundRecord",
    "SideEffect",
    "SideEffectState",
    "best_proposal",
]


class DeliberationStatus(StrEnum):
    """queued → running → completed (or failed)."""

    QUEUED = "queued"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"


class EvaluationRecord(BaseModel):
    """One agent's score of one proposal (or why it has none)."""

    model_config = ConfigDict(extra="forbid")

    evaluator: str
    score: float | None = None
    rationale: str = ""
    latency_ms: float = 0.0
    error: str | None = None


class ProposalRecord(BaseModel):
    """One agent's proposal in one round (the specification's ProposalRecord)."""

    model_config = ConfigDict(extra="forbid")

    agent_id: str
    content: str | None = None
    aggregated_score: float | None = None
    evaluations: list[EvaluationRecord] = Field(default_factory=list)
    latency_ms: float = 0.0
    attempts: int = 0
    self_corrected: bool = False
    mentor: bool = Field(default=False, description="by an agent allowed to mentor")
    cost: float = 0.0
    error: str | None = None


class RoundRecord(BaseModel):
    """One round: every agent proposes, then scores every other proposal."""

    model_config = ConfigDict(extra="forbid")

    number: int
    proposals: list[ProposalRecord] = Field(default_factory=list)


class SideEffectState(StrEnum):
    """Where a post-completion side effect stands."""

    PENDING = "pending"
    APPLIED = "applied"
    RETRYING = "retrying"
    SKIPPED = "skipped"


class SideEffect(BaseModel):
    """The ranking update, the Oracle judgments or the skill evidence of one deliberation."""

    model_config = ConfigDict(extra="forbid")

    state: SideEffectState = SideEffectState.PENDING
    attempts: int = 0
    error: str | None = None
    promoted: list[str] = Field(default_factory=list)
    floor_rank: int | None = None


class DeliberationRecord(BaseModel):
    """A deliberation from request to result."""

    model_config = ConfigDict(extra="forbid")

    id: str
    status: DeliberationStatus = DeliberationStatus.QUEUED
    request: DeliberationRequest | None = Field(
        default=None, description="None for a deliberation reported from elsewhere"
    )
    task_type: str | None = None
    complexity: Complexity | None = None
    agents: list[str]
    excluded: list[Excluded] = Field(default_factory=list)
    routing: Routing | None = Field(
        default=None,
        description="with select: who routing chose and why, and why the others not",
    )
    rounds: list[RoundRecord] = Field(default_factory=list)
    scores: dict[str, float | None] = Field(default_factory=dict)
    submissions: list[Submission] = Field(
        default_factory=list, description="every propose and evaluate call, for the stats"
    )
    result: ProposalRecord | None = None
    ranking: SideEffect = Field(default_factory=SideEffect)
    judgments: SideEffect = Field(default_factory=SideEffect)
    skill: SideEffect = Field(
        default_factory=SideEffect,
        description="the peer scores applied as evidence to the skill model",
    )
    source: str = Field(default="orchestrator", description="orchestrator or external")
    runner: str | None = Field(
        default=None,
        description="the service instance that runs it (its lease); None when reported",
    )
    created_at: float
    started_at: float | None = None
    finished_at: float | None = None
    error: str | None = None


def best_proposal(proposals: list[ProposalRecord]) -> ProposalRecord | None:
    """The best scored proposal (ties: agent id), or None when none was scored."""
    scored = [p for p in proposals if p.aggregated_score is not None]
    if not scored:
        return None
    return min(scored, key=lambda p: (-(p.aggregated_score or 0.0), p.agent_id))
