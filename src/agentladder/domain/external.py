"""Bring your own orchestrator: a deliberation run elsewhere, reported for ranking.

Per round, per agent: the aggregated score its proposal got (or null: no scored proposal)
and the latency of its work (one submission). The report goes through the same ranking
path as a deliberation run here, and is applied once per deliberation id.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator

from agentladder.domain.agents import AgentName
from agentladder.domain.deliberation_record import (
    COST_BASIS,
    DeliberationRecord,
    DeliberationStatus,
    EvaluationRecord,
    ProposalRecord,
    RoundRecord,
    best_proposal,
)
from agentladder.domain.judgment import TASK_TYPE_PATTERN
from agentladder.domain.ranking import Submission
from agentladder.domain.rules import Complexity
from agentladder.domain.scoring import deliberation_scores
from agentladder.errors import InvalidInput

__all__ = [
    "DELIBERATION_ID_PATTERN",
    "ExternalDeliberation",
    "ReportedAgent",
    "ReportedRound",
    "reported_record",
    "reported_rounds",
]

DELIBERATION_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
_STRICT = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class ReportedAgent(BaseModel):
    """One agent in one round of a reported deliberation."""

    model_config = _STRICT

    aggregated_score: float | None = Field(ge=0.0, le=10.0)
    latency_ms: float = Field(default=0.0, ge=0.0)
    evaluations: dict[AgentName, Annotated[float, Field(ge=0.0, le=10.0)]] = Field(
        default_factory=dict,
        description="the raw peer scores of this proposal, by evaluator (optional)",
    )


class ReportedRound(BaseModel):
    """One round: the agents that took part and how each did."""

    model_config = _STRICT

    agents: dict[AgentName, ReportedAgent] = Field(min_length=1, max_length=64)


class ExternalDeliberation(BaseModel):
    """``POST /deliberations/results``: a completed deliberation run elsewhere."""

    model_config = _STRICT

    deliberation_id: str = Field(pattern=DELIBERATION_ID_PATTERN)
    rounds: tuple[ReportedRound, ...] = Field(min_length=1, max_length=20)
    task_type: str | None = Field(default=None, pattern=TASK_TYPE_PATTERN)
    complexity: Complexity | None = None
    observed_at: AwareDatetime | None = Field(
        default=None,
        description="when it finished (ISO 8601 with its time zone, not in the future): the"
        " skill model's time for its scores; default: when reported",
    )

    @model_validator(mode="after")
    def _evaluators_took_part(self) -> ExternalDeliberation:
        agents = set(self.agents)
        for index, reported in enumerate(self.rounds):
            for author, result in reported.agents.items():
                for evaluator in result.evaluations:
                    where = f"rounds[{index}].agents.{author}.evaluations.{evaluator}"
                    if evaluator == author:
                        raise InvalidInput(where, evaluator, "an agent never evaluates itself")
                    if evaluator not in agents:
                        raise InvalidInput(where, evaluator, "is not in the deliberation")
        return self

    @property
    def agents(self) -> list[str]:
        """Every agent of any round, in order of first appearance."""
        seen: dict[str, None] = {}
        for reported in self.rounds:
            seen.update(dict.fromkeys(reported.agents))
        return list(seen)


def reported_rounds(external: ExternalDeliberation) -> list[RoundRecord]:
    """The rounds of a reported deliberation as the rounds of a record."""
    return [
        RoundRecord(
            number=number,
            proposals=[
                ProposalRecord(
                    agent_id=agent,
                    aggregated_score=v.aggregated_score,
                    evaluations=[
                        EvaluationRecord(evaluator=evaluator, score=score)
                        for evaluator, score in sorted(v.evaluations.items())
                    ],
                    latency_ms=v.latency_ms,
                    attempts=1,
                )
                for agent, v in reported.agents.items()
            ],
        )
        for number, reported in enumerate(external.rounds, start=1)
    ]


def reported_record(external: ExternalDeliberation, now: float) -> DeliberationRecord:
    """The completed record of a reported deliberation, ranked like one run here: one
    submission per agent per round, the best proposal of the last round as its result."""
    rounds = reported_rounds(external)
    by_round = [{p.agent_id: p.aggregated_score for p in r.proposals} for r in rounds]
    scores = deliberation_scores(by_round)
    return DeliberationRecord(
        id=external.deliberation_id,
        status=DeliberationStatus.COMPLETED,
        task_type=external.task_type,
        complexity=external.complexity,
        agents=external.agents,
        rounds=rounds,
        scores={agent: scores.get(agent) for agent in external.agents},
        submissions=[
            Submission(
                agent_id=p.agent_id, latency_ms=p.latency_ms, ok=p.aggregated_score is not None
            )
            for r in rounds
            for p in r.proposals
        ],
        result=best_proposal(rounds[-1].proposals),
        cost_basis=COST_BASIS,  # a report carries no costs: every call counts 0
        source="external",
        created_at=now,
        started_at=now if external.observed_at is None else external.observed_at.timestamp(),
        finished_at=now if external.observed_at is None else external.observed_at.timestamp(),
    )
