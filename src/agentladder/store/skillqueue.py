"""The skill queue: judgments' skill evidence applied off their request path.

A store that keeps one (NATS with ``skill_queue=on``: ``store/nats/skillqueue.py``) answers
``Store.skill_queue()`` with it; memory and SQLite answer None and keep the synchronous
step (``docs/skill.md``, "Between two fits"). A judgment's award is written with its skill
evidence in the same write (``award``): the award's own event is the queued evidence, so
the two are stored together or not at all. The evidence is applied once per key (a key
already in the skill log is a no-op) by the applier holding the queue's lease
(``services/skill/applier.py``), in the order the awards were stored.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from agentladder.store.records import OracleApplied, OracleFold

__all__ = ["Pulled", "QueueState", "SkillQueue"]


@dataclass(frozen=True, slots=True)
class QueueState:
    """What the queue holds now: how many awards wait for the applier and when the oldest
    was stored (seconds since the epoch; None when none wait)."""

    depth: int
    oldest_at: float | None

    def lag_s(self, now: float) -> float:
        """The age of the oldest evidence not applied yet (0 when none)."""
        return 0.0 if self.oldest_at is None else max(0.0, now - self.oldest_at)


@dataclass(frozen=True, slots=True)
class Pulled:
    """One pull: the evidence it holds (the JSON of each that the awards' events carry, in
    the order stored) and its ack (once every evidence is applied: the queue forgets every
    event it took, those without evidence too)."""

    evidence: list[bytes]
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
        """Judgments refused because the queue was full, since this process began."""

    @property
    def in_serve(self) -> bool:
        """Whether ``agentladder serve`` runs an applier (else only ``agentladder skill
        apply`` processes do)."""

    async def admit(self) -> None:
        """``SkillQueueFull`` (counted in ``refused``) when the queue holds its bound, as
        last looked at (at most ``ADMIT_FOR_S`` before): the caller stores nothing."""

    async def award(
        self, agent_id: str, key: str, fold: OracleFold, evidence: bytes
    ) -> OracleApplied | None:
        """``Store.apply_oracle``, the event written (when created) with ``evidence`` (its
        skill evidence's JSON) for the applier: one write, both or neither."""

    async def state(self) -> QueueState:
        """How many awards wait for the applier and the oldest one's time."""

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

    async def pull(self, shard: int, limit: int, wait_s: float) -> Pulled | None:
        """Up to ``limit`` awards of ``shard`` in the order stored (those pulled before and
        not acked come again once their ack is overdue), waiting at most ``wait_s`` for
        the first one; None when none came."""
