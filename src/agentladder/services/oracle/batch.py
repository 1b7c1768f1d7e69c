"""Many judgments at once: each exactly what ``Oracle.submit_for_judgment`` makes of it
(its own event, ledger lines and idempotency key, its XP by the same rules, its skill
evidence), applied in one store write (``Store.apply_oracle_many_then_skill``: on SQLite
one transaction for the events and the evidence of those created; a repeat's evidence,
applied with its first event, is applied again after it by ``SkillService.observe_many``
in case a crash left it out).

A judgment without a score, when a judge is configured, is judged and submitted alone,
in its place in the order. A judgment that would pass a bound on task types (its agent's,
``oracle.max_task_types_per_agent``, or the store's, ``max_task_types``) is refused alone,
the others applied. A store failure fails the whole call; what was applied before it stays
applied, and a repeat finds it (each item is idempotent by its contract).

An item naming an agent the Oracle does not know is refused (naming the closest known
ids) unless it says ``new_agent`` (``services/oracle/known.py``); once an item of a new
agent is accepted, the later items of that agent are of a known one.

Each outcome is the item's status and the XP it earned, never the profile: an answer
grows with the items sent, not with what the agents hold (the profile is one
``GET /oracle/profiles/{agent_id}`` away).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from agentladder.domain.frozen import built
from agentladder.domain.judgment import Judgment
from agentladder.domain.skill.evidence import DEFAULT_JUDGE, Evidence, ScoreEvidence
from agentladder.domain.task_types import check_agent_task_type
from agentladder.errors import AgentladderError, InvalidInput, PayloadConflict
from agentladder.services.clock import iso
from agentladder.services.oracle.known import known_ids, refusal, unknown_among
from agentladder.services.oracle.models import JudgmentRequest, fingerprint, same_judgment
from agentladder.services.oracle.service import Oracle, judgment_key, stored_history
from agentladder.services.skill.evidence import judgment_evidence
from agentladder.store.base import OracleApplied, OracleItem, SkillItem
from agentladder.store.records import OracleEvent
from agentladder.store.skills import SkillApplied

__all__ = ["EvidenceSource", "ItemStatus", "Submitted", "submit_many"]


@dataclass(frozen=True, slots=True)
class EvidenceSource:
    """For the skill evidence of a request that names no ``judge`` or ``observed_at``:
    the judge and the time to say (an import's scorer, its run's time)."""

    judge: str | None = None
    at: float | None = None


_NONE = EvidenceSource()


class ItemStatus(StrEnum):
    """What became of one judgment of a batch."""

    IMPORTED = "imported"
    DUPLICATE = "duplicate"
    CONFLICT = "conflict"
    REFUSED = "refused"


@dataclass(frozen=True, slots=True)
class Submitted:
    """One judgment's outcome: its status, the XP its award earned (task XP, and with the
    achievements it unlocked; a duplicate's are the first award's) and, for a conflict or
    a refusal, why."""

    status: ItemStatus
    xp_awarded: int | None = None
    total_xp: int | None = None
    error: str | None = None


def _earned(status: ItemStatus, result: Mapping[str, Any]) -> Submitted:
    """The outcome of an award from its stored (or returned) result."""
    return Submitted(status, int(result["xp_awarded"]), int(result["total_xp"]))


def _conflict(agent_id: str, contract_id: str) -> str:
    return (
        f"contract_id: {agent_id} was judged under this contract with another payload"
        f" ({contract_id!r})"
    )


def _judgment(oracle: Oracle, request: JudgmentRequest) -> Judgment:
    """The judgment of a request that needs no judge, provider and model from the config."""
    config = oracle.agents.get(request.agent_id)
    if config is None:
        held = request.__dict__
        values: dict[str, Any] = {name: held[name] for name in Judgment.__pydantic_fields__}
        return built(Judgment, **values)  # validated already, as a JudgmentRequest
    return request.judgment(
        provider=config.provider_id or request.provider, model=config.model_name or request.model
    )


async def submit_many(
    oracle: Oracle,
    requests: Sequence[JudgmentRequest],
    sources: Sequence[EvidenceSource] | None = None,
) -> list[Submitted]:
    """Each request as ``submit_for_judgment`` would take it, in order; one outcome each.
    ``sources``, one per request: the judge and time of its skill evidence when it names
    none."""
    out: list[Submitted] = []
    run: list[tuple[JudgmentRequest, EvidenceSource]] = []
    given = [_NONE] * len(requests) if sources is None else sources
    types = await _task_types(oracle, requests)
    unknown: set[str] = set()
    if not oracle.rules.accept_unregistered:
        named = {r.agent_id for r in requests if not r.new_agent}
        unknown = await unknown_among(oracle.store, oracle.agents, named)
    known = await known_ids(oracle.store, oracle.agents) if unknown else []
    accepted: set[str] = set()  # new agents of this batch, known from their first item
    for request, source in zip(requests, given, strict=True):
        agent = request.agent_id
        new = agent in unknown and agent not in accepted
        try:
            if new and not request.new_agent and (known or accepted):  # a likely typo
                raise refusal(agent, [*known, *sorted(accepted)])
            held = types.setdefault(agent, set())
            limit = oracle.rules.max_task_types_per_agent
            check_agent_task_type(agent, held, request.task_type, limit)
            oracle.observed(request)  # not in the future
            await oracle.task_types.admit([request.task_type])
        except InvalidInput as error:
            out.extend(await _applied(oracle, run))
            run = []
            out.append(Submitted(ItemStatus.REFUSED, error=str(error)))
            continue
        if new:  # said to be new, or the first agent of a store that knows none
            accepted.add(agent)
        held.add(request.task_type)
        if request.score is None and oracle.judge is not None:
            out.extend(await _applied(oracle, run))
            run = []
            out.append(await _judged_alone(oracle, request))
        else:
            run.append((request, source))
    out.extend(await _applied(oracle, run))
    return out


async def _task_types(oracle: Oracle, requests: Sequence[JudgmentRequest]) -> dict[str, set[str]]:
    """The task types each agent of the batch is judged in now (read once for all)."""
    profiles = await oracle.store.get_many_profiles({r.agent_id for r in requests})
    return {agent: set(found.value.specializations) for agent, found in profiles.items()}


async def _judged_alone(oracle: Oracle, request: JudgmentRequest) -> Submitted:
    try:
        result = await oracle.submit_for_judgment(request)
    except PayloadConflict:
        return Submitted(
            ItemStatus.CONFLICT, error=_conflict(request.agent_id, request.contract_id)
        )
    except AgentladderError as error:
        return Submitted(ItemStatus.REFUSED, error=str(error))
    status = ItemStatus.DUPLICATE if result.duplicate else ItemStatus.IMPORTED
    return Submitted(status, result.xp_awarded, result.total_xp)


async def _applied(
    oracle: Oracle, run: Sequence[tuple[JudgmentRequest, EvidenceSource]]
) -> list[Submitted]:
    """The run's judgments, with the skill evidence of those created, in one store write
    (``Store.apply_oracle_many_then_skill``: on SQLite one transaction); a repeat's
    evidence (applied with its first event, unless a crash left it out) after it."""
    if not run:
        return []
    skill = oracle.skill
    items: list[OracleItem] = []
    skills: list[SkillItem] = []
    digests: list[str] = []
    for request, source in run:
        digest = fingerprint(request)
        judgment = _judgment(oracle, request)
        fold, _ = oracle.judgment_fold(judgment, None, digest, iso(oracle.clock.now()))
        items.append((judgment.agent_id, judgment_key(judgment.contract_id), fold))
        digests.append(digest)
        if skill is not None:  # what a created event's result gives (its values are these)
            at = _at(oracle, request, source)
            skills.append(skill.item(_evidence_of(judgment, request, at, source)))
    if skill is None:
        pairs: list[tuple[OracleApplied | None, SkillApplied | None]] = [
            (outcome, None) for outcome in await oracle.store.apply_oracle_many(items)
        ]
    else:
        pairs = await oracle.store.apply_oracle_many_then_skill(
            list(zip(items, skills, strict=True))
        )
    out: list[Submitted] = []
    repeats: list[Evidence] = []
    for (request, source), digest, (outcome, _) in zip(run, digests, pairs, strict=True):
        if outcome is None:
            raise TypeError(f"the fold of {request.agent_id}/{request.contract_id} wrote nothing")
        event = outcome.event
        if not same_judgment(event.payload_hash, event.payload, digest):
            out.append(
                Submitted(
                    ItemStatus.CONFLICT, error=_conflict(request.agent_id, request.contract_id)
                )
            )
            continue
        if outcome.created:
            oracle.awards["judgment"] += 1
            out.append(_earned(ItemStatus.IMPORTED, event.result))
            continue
        out.append(_earned(ItemStatus.DUPLICATE, event.result))
        repeats.append(_evidence(event, request, _at(oracle, request, source), source))
    if skill is not None and repeats:
        await skill.observe_many(repeats)
    return out


def _at(oracle: Oracle, request: JudgmentRequest, source: EvidenceSource) -> float:
    """When the judged work happened: the request's ``observed_at``, else the source's
    time, else now."""
    at = source.at if request.observed_at is None else None
    return oracle.observed(request) if at is None else at


def _evidence_of(
    judgment: Judgment, request: JudgmentRequest, at: float, source: EvidenceSource
) -> ScoreEvidence:
    """The skill evidence of a judgment whose event is created now (history's deferred)."""
    return judgment_evidence(
        judgment.agent_id, judgment.contract_id, judgment.task_type, judgment.score,
        request.success, at, judge=request.judge or source.judge or DEFAULT_JUDGE,
        deferred=judgment.history,
    )  # fmt: skip


def _evidence(
    event: OracleEvent, request: JudgmentRequest, at: float, source: EvidenceSource
) -> ScoreEvidence:
    """The skill evidence of a stored judgment (its first result, as ``submit_for_judgment``
    gives it for a repeat too), by the request's judge (else the source's), at ``at``;
    deferred when the stored judgment is history, whoever repeats it."""
    result = event.result
    return judgment_evidence(
        result["agent_id"], result["contract_id"], result["task_type"], result["score"],
        request.success, at, judge=request.judge or source.judge or DEFAULT_JUDGE,
        deferred=stored_history(event),
    )  # fmt: skip
