"""The skill queue: judgments' skill evidence applied off their request path.

A store that keeps one (NATS with ``skill_queue=on``: ``store/nats/skillqueue.py``) answers
``Store.skill_queue()`` with it; memory and SQLite answer None and keep the synchronous
step (``docs/skill.md``, "Between two fits"). Evidence is queued by its key (a repeat is
dropped by the server within its duplicate window, and applied as a no-op after), cut in
shards by its agent, and applied by one leased applier per shard
(``services/skill/applier.py``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

__all__ = ["QueueState", "Queued", "SkillQueue", "shard_of"]


def shard_of(agent_id: str, shards: int) -> int:
    """The shard of an agent's evidence: a stable hash of its id (the same on every
    instance and every run: the first 8 bytes of its SHA-256), modulo ``shards``."""
    return int.from_bytes(hashlib.sha256(agent_id.encode()).digest()[:8], "big") % shards


@dataclass(frozen=True, slots=True)
class QueueState:
    """What the queue holds now: how many evidences and when the oldest was queued
    (seconds since the epoch; None when empty)."""

    depth: int
    oldest_at: float | None

    def lag_s(self, now: float) -> float:
        """The age of the oldest evidence not applied yet (0 when none)."""
        return 0.0 if self.oldest_at is None else max(0.0, now - self.oldest_at)


@dataclass(frozen=True, slots=True)
class Queued:
    """One queued evidence as pulled: its JSON, when it was queued, and its ack (once
    applied: the queue forgets it)."""

    data: bytes
    at: float
    ack: Callable[[], Awaitable[None]]


class SkillQueue(Protocol):
    """A durable, bounded queue of skill evidence, in shards, each with a lease."""

    @property
    def shards(self) -> int:
        """How many shards."""

    @property
    def lease_s(self) -> float:
        """How long a shard's lease lasts without a renewal."""

    @property
    def refused(self) -> int:
        """Evidence refused because the queue was full, since this process began."""

    async def enqueue(self, key: str, agent_id: str, data: bytes) -> int:
        """Queue the evidence (``data``: its JSON) of ``key`` on ``agent_id``'s shard,
        durable once this returns; its position (to ``withdraw`` it; 0 when the queue
        dropped it as a repeat of one queued shortly before). ``SkillQueueFull`` when the
        queue holds its bound: nothing was queued."""

    async def withdraw(self, position: int) -> None:
        """Remove a queued evidence whose judgment was refused after it was queued (one
        not there any more is left alone)."""

    async def state(self) -> QueueState:
        """How many evidences wait and the oldest one's time."""

    async def present(self, holder: str, until: float, now: float) -> int:
        """Say ``holder`` runs appliers until ``until``; how many holders do now."""

    async def absent(self, holder: str) -> None:
        """``holder`` runs no more appliers (a clean stop)."""

    async def take(self, shard: int, holder: str, until: float, now: float) -> bool:
        """Take or renew the lease of ``shard`` for ``holder`` until ``until``; whether it
        holds it (False: another holder's lease runs past ``now``)."""

    async def release(self, shard: int, holder: str) -> None:
        """Give up ``holder``'s lease of ``shard`` (nothing if another holds it)."""

    async def holders(self, now: float) -> dict[int, str]:
        """The holder of each shard whose lease runs past ``now``."""

    async def pull(self, shard: int, limit: int, wait_s: float) -> list[Queued]:
        """Up to ``limit`` evidences of ``shard`` in the order queued (those pulled before
        and not acked come again once their ack is overdue), waiting at most ``wait_s``
        for the first one."""
