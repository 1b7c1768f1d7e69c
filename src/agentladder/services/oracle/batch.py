"""Many judgments at once: each exactly what ``Oracle.submit_for_judgment`` makes of it
(its own event, ledger lines and idempotency key, its XP by the same rules, its skill
evidence), applied in few store writes (``Store.apply_oracle_many``, then
``SkillService.observe_many``).

A judgment without a score, when a judge is configured, is judged and submitted alone,
in its place in the order. A store failure fails the whole call; what was applied before
it stays applied, and a repeat finds it (each item is idempotent by its contract).

An item naming an agent the Oracle does not know is refused (naming the closest known
ids) unless it says ``new_agent`` (``services/oracle/known.py``); once an item of a new
agent is accepted, the later items of that agent are of a known one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from agentladder.domain.judgment import Judgment
from agentladder.domain.skill.evidence import Evidence, ScoreEvidence
from agentladder.errors import AgentladderError, PayloadConflict
from agentladder.services.clock import iso
from agentladder.services.oracle.known import known_ids, refusal, unknown_among
from agentladder.services.oracle.models import JudgmentRequest, JudgmentResult, fingerprint
from agentladder.services.oracle.service import Oracle, judgment_key, repeated_result
from agentladder.services.skill.evidence import judgment_evidence
from agentladder.store.base import OracleItem
from agentladder.store.records import OracleEvent

__all__ = ["ItemStatus", "Submitted", "submit_many"]


class ItemStatus(StrEnum):
    """What became of one judgment of a batch."""

    IMPORTED = "imported"
    DUPLICATE = "duplicate"
    CONFLICT = "conflict"
    REFUSED = "refused"


@dataclass(frozen=True, slots=True)
class Submitted:
    """One judgment's outcome: its status, its result (when asked for; a duplicate's is the
    first result) and, for a conflict or a refusal, why."""

    status: ItemStatus
    result: JudgmentResult | None = None
    error: str | None = None


def _conflict(agent_id: str, contract_id: str) -> str:
    return (
        f"contract_id: {agent_id} was judged under this contract with another payload"
        f" ({contract_id!r})"
    )


def _judgment(oracle: Oracle, request: JudgmentRequest) -> Judgment:
    """The judgment of a request that needs no judge, provider and model from the config."""
    config = oracle.agents.get(request.agent_id)
    if config is None:
        values: dict[str, Any] = {name: getattr(request, name) for name in Judgment.model_fields}
        return Judgment.model_construct(**values)  # validated already, as a JudgmentRequest
    return request.judgment(
        provider=config.provider_id or request.provider, model=config.model_name or request.model
    )


async def submit_many(
    oracle: Oracle, requests: Sequence[JudgmentRequest], *, results: bool = True
) -> list[Submitted]:
    """Each request as ``submit_for_judgment`` would take it, in order; one outcome each.
    ``results=False`` leaves out the results (an import counts statuses only)."""
    out: list[Submitted] = []
    run: list[JudgmentRequest] = []
    unknown: set[str] = set()
    if not oracle.rules.accept_unregistered:
        named = {r.agent_id for r in requests if not r.new_agent}
        unknown = await unknown_among(oracle.store, oracle.agents, named)
    known = await known_ids(oracle.store, oracle.agents) if unknown else []
    accepted: set[str] = set()  # new agents of this batch, known from their first item
    for request in requests:
        agent = request.agent_id
        new = agent in unknown and agent not in accepted
        if new and not request.new_agent and (known or accepted):  # a likely typo: refused
            out.extend(await _applied(oracle, run, results))
            run = []
            error = refusal(agent, [*known, *sorted(accepted)])
            out.append(Submitted(ItemStatus.REFUSED, error=str(error)))
            continue
        if new:  # said to be new, or the first agent of a store that knows none
            accepted.add(agent)
        if request.score is None and oracle.judge is not None:
            out.extend(await _applied(oracle, run, results))
            run = []
            out.append(await _judged_alone(oracle, request))
        else:
            run.append(request)
    out.extend(await _applied(oracle, run, results))
    return out


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
    return Submitted(status, result)


async def _applied(
    oracle: Oracle, requests: Sequence[JudgmentRequest], results: bool
) -> list[Submitted]:
    if not requests:
        return []
    items: list[OracleItem] = []
    digests: list[str] = []
    folds: list[list[Callable[[], JudgmentResult]]] = []
    for request in requests:
        digest = fingerprint(request)
        judgment = _judgment(oracle, request)
        fold, folded = oracle.judgment_fold(judgment, None, digest, iso(oracle.clock.now()))
        items.append((judgment.agent_id, judgment_key(judgment.contract_id), fold))
        digests.append(digest)
        folds.append(folded)
    applied = await oracle.store.apply_oracle_many(items)
    out: list[Submitted] = []
    evidence: list[Evidence] = []
    now = oracle.clock.now().timestamp()
    for request, digest, folded, outcome in zip(requests, digests, folds, applied, strict=True):
        if outcome is None:
            raise TypeError(f"the fold of {request.agent_id}/{request.contract_id} wrote nothing")
        event = outcome.event
        if outcome.created:
            oracle.awards["judgment"] += 1
            out.append(Submitted(ItemStatus.IMPORTED, folded[-1]() if results else None))
        elif event.payload_hash != digest:
            out.append(
                Submitted(
                    ItemStatus.CONFLICT, error=_conflict(request.agent_id, request.contract_id)
                )
            )
            continue
        else:
            result = repeated_result(event, outcome.profile, digest) if results else None
            out.append(Submitted(ItemStatus.DUPLICATE, result))
        evidence.append(_evidence(event, request.success, now))
    if oracle.skill is not None and evidence:
        await oracle.skill.observe_many(evidence)
    return out


def _evidence(event: OracleEvent, success: bool, at: float) -> ScoreEvidence:
    """The skill evidence of a stored judgment (its first result, as ``submit_for_judgment``
    gives it for a repeat too)."""
    result = event.result
    return judgment_evidence(
        result["agent_id"], result["contract_id"], result["task_type"], result["score"],
        success, at,
    )  # fmt: skip
