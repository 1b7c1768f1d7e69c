"""The evidence each observation gives the model (``domain.skill.evidence``), and its key.

Keys make each observation count once: ``deliberation:<id>``, ``judgment:<agent>:<contract>``,
``verdict:<agent>:<contract>``, ``model:<agent>:<digest of the transition>``.
"""

from __future__ import annotations

import hashlib

from agentladder.domain.deliberation_record import DeliberationRecord
from agentladder.domain.skill.evidence import (
    DEFAULT_JUDGE,
    DeliberationEvidence,
    Evaluation,
    ModelChange,
    ReportedScore,
    ScoreEvidence,
    VerdictEvidence,
)

__all__ = [
    "DEFAULT_TASK_TYPE",
    "from_record",
    "judgment_evidence",
    "model_change",
    "verdict_evidence",
]

DEFAULT_TASK_TYPE = "deliberation"
"""The task type of a deliberation that names none (as its Oracle judgments use)."""


def from_record(record: DeliberationRecord, at: float) -> DeliberationEvidence:
    """Every peer score of every proposal of a deliberation (self-scores, which the
    orchestrator never asks for, and failed evaluations left out); for a reported
    deliberation whose report carried no raw scores for a proposal, its aggregated score."""
    evaluations: list[Evaluation] = []
    aggregated: list[ReportedScore] = []
    for r in record.rounds:
        for p in r.proposals:
            scored = [
                Evaluation(
                    evaluator=ev.evaluator, author=p.agent_id, round=r.number, score=ev.score
                )
                for ev in p.evaluations
                if ev.score is not None and ev.evaluator != p.agent_id
            ]
            evaluations.extend(scored)
            if not scored and record.source == "external" and p.aggregated_score is not None:
                aggregated.append(
                    ReportedScore(author=p.agent_id, round=r.number, score=p.aggregated_score)
                )
    return DeliberationEvidence(
        key=f"deliberation:{record.id}",
        at=at,
        task_type=record.task_type or DEFAULT_TASK_TYPE,
        agents=tuple(record.agents),
        evaluations=tuple(evaluations),
        aggregated=tuple(aggregated),
    )


def judgment_evidence(
    agent_id: str,
    contract_id: str,
    task_type: str,
    score: float | None,
    success: bool,
    at: float,
    judge: str = DEFAULT_JUDGE,
    *,
    deferred: bool = False,
) -> ScoreEvidence:
    """An Oracle judgment of a task that no deliberation here already scored, by ``judge``
    (the source whose noise and leniency are learned), observed at ``at``; ``deferred``:
    left to the next fit (``ScoreEvidence.deferred``)."""
    return ScoreEvidence(
        key=f"judgment:{agent_id}:{contract_id}",
        at=at,
        agent_id=agent_id,
        task_type=task_type,
        score=score,
        success=success,
        judge=judge,
        deferred=deferred,
    )


def verdict_evidence(
    agent_id: str, contract_id: str, task_type: str, passed: bool, at: float
) -> VerdictEvidence:
    """A Sentinel's verdict on one output."""
    return VerdictEvidence(
        key=f"verdict:{agent_id}:{contract_id}",
        at=at,
        agent_id=agent_id,
        task_type=task_type,
        passed=passed,
    )


def model_change(
    agent_id: str, since: float, model_name: str, provider_id: str, at: float
) -> ModelChange:
    """The agent's change to ``model_name`` at ``provider_id``, from the declaration it
    heartbeated last at ``since`` (the key names that transition, so a retried heartbeat
    counts it once)."""
    token = hashlib.sha256(f"{since!r}|{provider_id}|{model_name}".encode()).hexdigest()[:32]
    return ModelChange(
        key=f"model:{agent_id}:{token}",
        at=at,
        agent_id=agent_id,
        model_name=model_name,
        provider_id=provider_id,
    )
