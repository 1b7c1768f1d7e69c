"""What a deliberation leaves behind: rounds of proposals with their evaluations and scores.

The record is what ``GET /deliberation/{id}`` shows and what the store keeps. The
``ranking`` and ``judgments`` parts track the post-completion side effects, which never
block or fail the deliberation itself.

Costs (``docs/costs.md``). Every call is priced at the prices of the agent that made it:
a proposal's ``cost`` is what its author's propose call cost, an evaluation's ``cost`` what
its evaluator's call cost. ``agent_costs`` adds up each agent's own calls, ``total_cost``
all of them. Records stored before this rule have ``cost_basis`` 1 (the field absent): a
proposal's ``cost`` there also holds what its peers spent evaluating it, at their prices,
so their ``total_cost`` is the sum of the proposals' costs and ``agent_costs`` is unknown
(empty). The Oracle charges each agent ``charged_cost``: its own calls (basis 2), or
its proposals' costs (basis 1, as those records were judged when they were written).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentladder.domain.attribution import AgentOutcome
from agentladder.domain.deliberation import DeliberationRequest, Excluded
from agentladder.domain.ranking import Submission
from agentladder.domain.routing.spec import Routing
from agentladder.domain.rules import Complexity

__all__ = [
    "COST_BASIS",
    "CallInFlight",
    "DeliberationRecord",
    "DeliberationStatus",
    "EvaluationRecord",
    "ProposalRecord",
    "RoundRecord",
    "SideEffect",
    "SideEffectState",
    "agent_costs",
    "best_proposal",
    "charged_cost",
    "total_cost",
]

COST_BASIS = 2
"""How the costs of a record written now are kept: each call charged to its caller."""
LEGACY_COST_BASIS = 1
"""Records written before: a proposal's cost includes its evaluations by its peers."""


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
    cost: float = Field(
        default=0.0, description="the evaluator's call, at the evaluator's prices (basis 2)"
    )
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
    cost: float = Field(
        default=0.0,
        description="the author's propose call at its prices (basis 1: plus its evaluations)",
    )
    error: str | None = None


class RoundRecord(BaseModel):
    """One round: every agent proposes, then scores every other proposal."""

    model_config = ConfigDict(extra="forbid")

    number: int
    proposals: list[ProposalRecord] = Field(default_factory=list)


class SideEffectState(StrEnum):
    """Where a post-completion side effect stands (``abandoned``: it will never be applied,
    ``error`` says why: the deliberation failed or was interrupted)."""

    PENDING = "pending"
    APPLIED = "applied"
    RETRYING = "retrying"
    SKIPPED = "skipped"
    ABANDONED = "abandoned"


class SideEffect(BaseModel):
    """The ranking update, the Oracle judgments or the skill evidence of one deliberation."""

    model_config = ConfigDict(extra="forbid")

    state: SideEffectState = SideEffectState.PENDING
    attempts: int = 0
    error: str | None = None
    promoted: list[str] = Field(default_factory=list)
    floor_rank: int | None = None
    floor_group: list[str] = Field(
        default_factory=list, description="ranking: the agents at the floor rank, who competed"
    )
    explanation: str | None = Field(
        default=None, description="ranking: why whom was promoted, or nobody"
    )


class CallInFlight(BaseModel):
    """A call of a running deliberation, as it stood when the record was read: under way
    (``calling``, for ``seconds`` so far) or waiting before it is made (``waiting``,
    ``seconds`` left, ``reason``: what it waits for)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent_id: str
    call: str = Field(description="propose or evaluate")
    of: str | None = Field(default=None, description="evaluate: whose proposal")
    attempt: int = Field(default=1, ge=1)
    state: str = Field(description="calling or waiting")
    seconds: float = Field(description="calling: seconds so far; waiting: seconds left")
    reason: str = Field(default="", description="waiting: what for")

    def text(self) -> str:
        """``calling fox: 3.2 s so far`` or ``waiting for echo: provider asked to retry
        in 12 s``."""
        what = self.call if self.of is None else f"{self.call} of {self.of}'s proposal"
        if self.state == "waiting":
            return f"waiting for {self.agent_id} ({what}): {self.reason}"
        again = "" if self.attempt == 1 else f", attempt {self.attempt}"
        return f"calling {self.agent_id} ({what}{again}): {self.seconds:.1f} s so far"


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
    outcomes: dict[str, AgentOutcome] = Field(
        default_factory=dict,
        description="each agent's part: its calls, whose failures they were, how it is judged"
        " (empty in records stored before attribution)",
    )
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
    cost_basis: int = Field(
        default=LEGACY_COST_BASIS,
        ge=LEGACY_COST_BASIS,
        le=COST_BASIS,
        description="2: each call is charged to its caller; 1 (older records): a proposal's"
        " cost includes what its peers spent evaluating it",
    )
    total_cost: float = Field(default=0.0, description="what every call of it cost")
    agent_costs: dict[str, float] = Field(
        default_factory=dict,
        description="what each agent spent on its own calls (empty when cost_basis is 1)",
    )
    in_flight: list[CallInFlight] = Field(
        default_factory=list,
        description="running: each call under way or waiting to be made, as the record was"
        " read (empty once it ended)",
    )

    @model_validator(mode="after")
    def _costs_of_older_records(self) -> Self:
        """A record stored without its totals gets them from its rounds."""
        if "total_cost" not in self.model_fields_set:
            self.total_cost = total_cost(self.rounds, self.cost_basis)
        if "agent_costs" not in self.model_fields_set:
            self.agent_costs = agent_costs(self.rounds, self.cost_basis)
        return self

    def count_costs(self) -> None:
        """Bring ``total_cost`` and ``agent_costs`` up to date with the rounds."""
        self.total_cost = total_cost(self.rounds, self.cost_basis)
        self.agent_costs = agent_costs(self.rounds, self.cost_basis)


def total_cost(rounds: Sequence[RoundRecord], basis: int = COST_BASIS) -> float:
    """Every call's cost: proposals and evaluations (basis 1: the proposals, which hold
    their evaluations)."""
    total = 0.0
    for proposal in (p for r in rounds for p in r.proposals):
        total += proposal.cost
        if basis >= COST_BASIS:
            total += sum(e.cost for e in proposal.evaluations)
    return total


def agent_costs(rounds: Sequence[RoundRecord], basis: int = COST_BASIS) -> dict[str, float]:
    """What each agent spent on its own proposals and evaluations; empty for basis 1,
    whose proposal costs mix in the evaluators' spending."""
    if basis < COST_BASIS:
        return {}
    spent: dict[str, float] = {}
    for proposal in (p for r in rounds for p in r.proposals):
        spent[proposal.agent_id] = spent.get(proposal.agent_id, 0.0) + proposal.cost
        for evaluation in proposal.evaluations:
            who = evaluation.evaluator
            spent[who] = spent.get(who, 0.0) + evaluation.cost
    return spent


def charged_cost(record: DeliberationRecord, agent: str) -> float:
    """The cost the Oracle's judgment of ``agent`` carries: what it spent (basis 2), or the
    costs of its proposals (basis 1, as such records were always judged)."""
    if record.cost_basis >= COST_BASIS:
        return agent_costs(record.rounds, record.cost_basis).get(agent, 0.0)
    return sum(p.cost for r in record.rounds for p in r.proposals if p.agent_id == agent)


def best_proposal(proposals: list[ProposalRecord]) -> ProposalRecord | None:
    """The best scored proposal (ties: agent id), or None when none was scored."""
    scored = [p for p in proposals if p.aggregated_score is not None]
    if not scored:
        return None
    return min(scored, key=lambda p: (-(p.aggregated_score or 0.0), p.agent_id))
