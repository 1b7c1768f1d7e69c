"""``apply_oracle_many`` and ``apply_skill_many`` from the one-event methods, for the
backends without a batched write of their own (memory) or whose writes are round trips
(NATS: several agents' events in flight at once, each agent's in order)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from agentladder.store.base import OracleApplied, OracleFold, OracleItem

__all__ = ["IN_FLIGHT", "apply_each", "apply_in_flight"]

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
