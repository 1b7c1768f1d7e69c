"""``apply_oracle_many`` and ``apply_skill_many`` from the one-event methods, for the
backends without a batched write of their own (memory) or whose writes are round trips
(NATS: several agents' events in flight at once, each agent's in order); and
``apply_oracle_then_skill`` and ``apply_oracle_many_then_skill`` as two writes, for the
backends whose Oracle events and skill log cannot share one atomic write (memory, NATS)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from agentladder.store.base import OracleApplied, OracleFold, OracleItem, SkillItem, Store
from agentladder.store.skills import SkillApplied

__all__ = [
    "IN_FLIGHT",
    "apply_each",
    "apply_in_flight",
    "created_at",
    "oracle_many_then_skill",
    "oracle_then_skill",
    "paired",
]

IN_FLIGHT = 100
"""Agents whose events are in flight at once on a store of round trips."""

ApplyOne = Callable[[str, str, OracleFold], Awaitable[OracleApplied | None]]


async def apply_each(apply: ApplyOne, items: Sequence[OracleItem]) -> list[OracleApplied | None]:
    """Each item in turn."""
    return [await apply(agent_id, key, fold) for agent_id, key, fold in items]


async def apply_in_flight(
    apply: ApplyOne, items: Sequence[OracleItem], in_flight: int = IN_FLIGHT
) -> list[OracleApplied | None]:
    """The items of each agent in their order, up to ``in_flight`` agents at once (events of
    one agent fold one from the other: they cannot overlap). On a failure the others
    already applied stay applied (each is idempotent by its key: a retry finds them)."""
    chains: dict[str, list[int]] = {}
    for index, (agent_id, _, _) in enumerate(items):
        chains.setdefault(agent_id, []).append(index)
    out: list[OracleApplied | None] = [None] * len(items)
    gate = asyncio.Semaphore(in_flight)

    async def chain(indexes: list[int]) -> None:
        async with gate:
            for index in indexes:
                agent_id, key, fold = items[index]
                out[index] = await apply(agent_id, key, fold)

    async with asyncio.TaskGroup() as group:
        for indexes in chains.values():
            group.create_task(chain(indexes))
    return out


async def oracle_then_skill(
    store: Store, agent_id: str, key: str, fold: OracleFold, skill: SkillItem
) -> tuple[OracleApplied | None, SkillApplied | None]:
    """``Store.apply_oracle_then_skill`` as two writes: the Oracle event, then the skill
    item when the event was created. A failure between them leaves the event without its
    evidence; the next submission of the same judgment finds the event and applies the
    evidence (``Oracle.submit_for_judgment``)."""
    applied = await store.apply_oracle(agent_id, key, fold)
    if applied is None or not applied.created:
        return applied, None
    skill_key, agents, skill_fold = skill
    return applied, await store.apply_skill(skill_key, agents, skill_fold)


SkillsWriter = Callable[[list[SkillItem]], Awaitable[list[SkillApplied]]]
"""Writes skill items; returns their outcomes in order."""


async def oracle_many_then_skill(
    store: Store,
    pairs: Sequence[tuple[OracleItem, SkillItem]],
    created_skills: SkillsWriter | None = None,
) -> list[tuple[OracleApplied | None, SkillApplied | None]]:
    """``Store.apply_oracle_many_then_skill`` as two writes: the Oracle events, then the
    skill items of those created (by ``created_skills``, a store's writer for evidence
    it knows to be new; else ``apply_skill_many``). A failure between them leaves events
    without their evidence, which a repeat of the judgment applies
    (``services.oracle.batch``)."""
    applied = await store.apply_oracle_many([oracle for oracle, _ in pairs])
    created = created_at(applied)
    write = created_skills or store.apply_skill_many
    observed = await write([pairs[i][1] for i in created])
    return paired(applied, created, observed)


def created_at(applied: Sequence[OracleApplied | None]) -> list[int]:
    """The indices of the Oracle outcomes that created their event (their skill items are
    the ones to write)."""
    return [i for i, outcome in enumerate(applied) if outcome is not None and outcome.created]


def paired(
    applied: Sequence[OracleApplied | None],
    created: Sequence[int],
    observed: Sequence[SkillApplied],
) -> list[tuple[OracleApplied | None, SkillApplied | None]]:
    """Each Oracle outcome with its skill outcome: ``observed`` for those at ``created``
    (in that order), None for the others."""
    skills: list[SkillApplied | None] = [None] * len(applied)
    for index, skill in zip(created, observed, strict=True):
        skills[index] = skill
    return list(zip(applied, skills, strict=True))
