"""Bounds on task types: an agent is judged in at most ``max_task_types_per_agent`` of
them, a store holds at most ``max_task_types``.

A task type is any name matching ``[a-z0-9_.-]{1,64}``, and each one an agent is judged in
adds a specialization to its profile, a skill estimate, a leaderboard and a board on the
dashboard. Unbounded, one client naming a new type in every judgment makes every profile
read, every answer holding it and every page showing it grow without end (issue 23: three
batches of 1,000 new types were answered with 72, 215 and 359 MB). The bounds are far
above what a fleet uses (docs/reliability.md, "Hardening, second round: the API").
"""

from __future__ import annotations

from collections.abc import Collection

from agentladder.errors import TooManyTaskTypes

__all__ = ["check_agent_task_type", "check_store_task_types"]


def check_agent_task_type(
    agent_id: str, known: Collection[str], task_type: str, limit: int
) -> None:
    """``TooManyTaskTypes`` when ``task_type`` is not among the agent's ``known`` types and
    the agent already has ``limit`` of them."""
    if task_type not in known and len(known) >= limit:
        raise TooManyTaskTypes(
            task_type,
            f"would be task type number {len(known) + 1:,} of agent {agent_id!r}, which may be"
            f" judged in at most {limit:,} (oracle.max_task_types_per_agent)",
        )


def check_store_task_types(known: Collection[str], task_types: Collection[str], limit: int) -> None:
    """``TooManyTaskTypes`` for the first of ``task_types`` that would take the store's
    ``known`` types past ``limit``."""
    count = len(known)
    for task_type in dict.fromkeys(task_types):
        if task_type in known:
            continue
        count += 1
        if count > limit:
            raise TooManyTaskTypes(
                task_type,
                f"would be task type number {count:,} of this store, which holds at most"
                f" {limit:,} (oracle.max_task_types)",
            )
