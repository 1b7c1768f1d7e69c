"""After a deliberation completes: the ranking update and the Oracle's judgments.

Both run as a side effect that never blocks or fails the deliberation. The ranking update
is the specification's scoring algorithm folded into one atomic commit of every
participant's stats, compare-and-set on each and marked with the deliberation id, so it
is applied exactly once even when retried, raced or reported twice; the ranking part of
the record names the floor group and explains who was promoted, or why nobody was. Each
agent's work is also judged by the Oracle (contract ``<deliberation id>.<agent>``,
idempotent) as its outcome says (``domain/attribution.py``: failed when its own calls
failed, not judged when it was only unscored), charged what it spent itself
(``charged_cost``: its proposals and its evaluations). A failing store is retried with
back-off until it recovers or the service stops.

A deliberation that did not complete (interrupted, or past its deadline) promotes nobody
and judges nobody: its calls made are folded into the stats (``apply_calls``), and its
judgments and skill evidence are abandoned with the reason.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from agentladder.domain.attribution import AgentOutcome, JudgmentCall, explain_promotion, outcomes
from agentladder.domain.deliberation_record import (
    DeliberationRecord,
    ProposalRecord,
    SideEffect,
    SideEffectState,
    charged_cost,
)
from agentladder.domain.ranking import RankingOutcome, rank_deliberation
from agentladder.domain.scoring import deliberation_scores
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.errors import AlreadyApplied, TooManyTaskTypes
from agentladder.redaction import scrub
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.service import Oracle
from agentladder.services.skill.evidence import from_record
from agentladder.services.skill.service import SkillService
from agentladder.store.base import Store
from agentladder.store.retry import WriteTally, retry_on_conflict

__all__ = [
    "apply_calls",
    "apply_judgments",
    "apply_ranking",
    "apply_skill",
    "judged_type",
    "outcomes_of",
    "with_backoff",
]

log = logging.getLogger(__name__)
DEFAULT_TASK_TYPE = "deliberation"


def judged_type(task_type: str | None) -> str:
    """The task type a deliberation's participants are judged in."""
    return task_type or DEFAULT_TASK_TYPE


async def with_backoff(
    what: str,
    effect: SideEffect,
    action: Callable[[], Awaitable[None]],
    *,
    kind: str,
    tally: WriteTally | None = None,
    first_delay: float = 0.05,
    max_delay: float = 5.0,
    max_attempts: int | None = None,
) -> None:
    """Run ``action`` until it succeeds, doubling the pause after each failure; each
    failure is counted in ``tally.retried[kind]`` (``/metrics``)."""
    delay = first_delay
    while True:
        effect.attempts += 1
        try:
            await action()
        except asyncio.CancelledError:
            raise
        except Exception as error:  # logged, retried, never fatal
            if tally is not None:
                tally.retried[kind] += 1
            effect.state = SideEffectState.RETRYING
            effect.error = scrub(f"{type(error).__name__}: {error}")
            log.warning("%s failed (attempt %d), retrying: %s", what, effect.attempts, error)
            if max_attempts is not None and effect.attempts >= max_attempts:
                return
            await asyncio.sleep(delay)
            delay = min(max_delay, delay * 2)
        else:
            effect.state = SideEffectState.APPLIED
            effect.error = None
            return


def outcomes_of(
    record: DeliberationRecord, success_min_score: float | None = None
) -> dict[str, AgentOutcome]:
    """The record's outcomes; for a record stored before they were kept, from its rounds
    (and its scores, from the rounds too when it has none)."""
    if record.outcomes:
        return record.outcomes
    scores: dict[str, float | None] = dict(record.scores)
    if not scores:
        by_round = [{p.agent_id: p.aggregated_score for p in r.proposals} for r in record.rounds]
        scores = dict(deliberation_scores(by_round))
    return outcomes(record.agents, record.rounds, scores, success_min_score)


async def apply_ranking(
    store: Store, record: DeliberationRecord, now: int, tally: WriteTally | None = None
) -> RankingOutcome | None:
    """Fold the deliberation into every participant's stats, once; None if applied before.
    The record's ranking part names the floor group and explains the promotion."""
    rounds = [{p.agent_id: p.aggregated_score for p in r.proposals} for r in record.rounds]
    outcome = await _fold(store, record, rounds, now, tally)
    if outcome is None:
        return None
    promotion = outcome.promotion
    record.ranking.promoted = list(promotion.promoted)
    record.ranking.floor_rank = promotion.floor_rank
    record.ranking.floor_group = list(promotion.floor_group)
    record.ranking.explanation = explain_promotion(promotion, outcomes_of(record))
    return outcome


async def apply_calls(
    store: Store, record: DeliberationRecord, now: int, why: str, tally: WriteTally | None = None
) -> None:
    """A deliberation that did not complete: its calls made (its submissions) folded into
    the stats, nobody promoted, no deliberation counted; once (the same marker)."""
    if await _fold(store, record, [], now, tally) is not None:
        record.ranking.explanation = f"nobody promoted: {why}; its calls made are counted"


async def _fold(
    store: Store,
    record: DeliberationRecord,
    rounds: list[dict[str, float | None]],
    now: int,
    tally: WriteTally | None,
) -> RankingOutcome | None:

    async def attempt() -> RankingOutcome:
        found = await store.get_many_stats(record.agents)  # one read for all
        current = {agent: found.get(agent) for agent in record.agents}
        stats = {a: AgentPerformanceStats() if v is None else v.value for a, v in current.items()}
        outcome = rank_deliberation(stats, rounds, record.submissions, now)
        updates = {
            a: (outcome.stats[a], 0 if v is None else v.revision) for a, v in current.items()
        }
        await store.commit_stats(updates, marker=record.id)
        return outcome

    try:
        return await retry_on_conflict(attempt, op="stats", tally=tally)
    except AlreadyApplied:
        return None


async def apply_judgments(
    oracle: Oracle, record: DeliberationRecord, success_min_score: float | None = None
) -> None:
    """Judge each participant's work in the deliberation (idempotent per agent), as its
    outcome says: an agent that was only unscored (its evaluators failed) is not judged.
    The participants are judged at once (each judgment writes its own agent's events);
    when one fails, the others still end before the first error is raised, so a retry
    never runs beside them. A participant whose judgment would pass a bound on task
    types (another write took the last place since the deliberation was accepted) is
    left unjudged, with a warning: retrying would never succeed."""
    found = outcomes_of(record, success_min_score)

    async def judge(agent: str, outcome: AgentOutcome) -> None:
        proposals = [p for r in record.rounds for p in r.proposals if p.agent_id == agent]
        try:
            await _judge_one(oracle, record, agent, proposals, outcome)
        except TooManyTaskTypes as refused:
            log.warning("deliberation %s: %s not judged: %s", record.id, agent, refused)

    judged = [
        judge(agent, outcome)
        for agent in record.agents
        if (outcome := found.get(agent)) is not None and outcome.judgment is not JudgmentCall.NONE
    ]
    ended = await asyncio.gather(*judged, return_exceptions=True)
    for result in ended:
        if isinstance(result, BaseException):
            raise result


async def _judge_one(
    oracle: Oracle,
    record: DeliberationRecord,
    agent: str,
    proposals: list[ProposalRecord],
    outcome: AgentOutcome,
) -> None:
    await oracle.submit_for_judgment(
        evidence=False,  # the skill model has this deliberation's peer scores already
        request=JudgmentRequest(
            agent_id=agent,
            contract_id=f"{record.id}.{agent}",
            task_type=judged_type(record.task_type),
            score=record.scores.get(agent),
            success=outcome.judgment is JudgmentCall.SUCCESS,
            retries=sum(max(0, p.attempts - 1) for p in proposals),
            duration_ms=sum(p.latency_ms for p in proposals),
            cost=charged_cost(record, agent),  # its own calls (docs/costs.md)
            complexity=record.complexity,
            # a report names the agents it ranks: they are what it says, like an import
            new_agent=record.source == "external",
        ),
    )


async def apply_skill(skill: SkillService, record: DeliberationRecord) -> None:
    """The deliberation's peer scores as evidence for the skill model (once per id)."""
    at = record.finished_at if record.finished_at is not None else skill.now()
    await skill.observe(from_record(record, at))
