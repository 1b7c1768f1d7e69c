"""What the gateway's clients spent: the small storage interface of the budgets.

One value per (client, period key) (``domain/budget.py``: ``day-2026-12-05``,
``month-2026-12``, ``total``), in whole nano-dollars. ``add_spend`` adds to several at
once; an addition is an atomic increment (SQLite: one ``UPSERT`` per key in one
transaction; NATS: compare-and-set on the key's revision, retried; memory: a dict), so
instances that add to the same key at the same time lose nothing.

A budgeted client's request holds money before it is forwarded: ``reserve_spend`` reads
the key's spend and the holds in force on it and, in the same atomic step, adds the new
hold only when ``domain.budget.refusal`` grants it (SQLite: one ``BEGIN IMMEDIATE``
transaction; NATS: compare-and-set on the key's holds entry, read before the spend;
memory: no await in between). ``settle_spend`` adds the answer's cost and drops its
hold; ``release_spend`` drops a hold unused. A hold past its ``expires_at`` (its
process died before settling it) counts no more. Every store (memory, SQLite, NATS)
implements it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Protocol

from agentladder.domain.budget import Refusal

__all__ = ["Hold", "Reserved", "SpendKey", "SpendStore"]

SpendKey = tuple[str, str]
"""The client (its token's name) and the period's key."""


@dataclass(frozen=True, slots=True)
class Hold:
    """Money held for one request: its id, the (client, period key) of the client's
    budget, nano-dollars, and when it stops counting (epoch seconds)."""

    id: str
    key: SpendKey
    nano: int
    expires_at: float


@dataclass(frozen=True, slots=True)
class Reserved:
    """A hold's outcome: refused (why) or granted (None), with the key's spend and the
    other holds in force when it was decided."""

    refused: Refusal | None
    spent: int
    held: int


class SpendStore(Protocol):
    """The clients' spend per period, and the holds of their requests in flight."""

    async def add_spend(self, charges: Mapping[SpendKey, int]) -> None:
        """Add each charge (nano-dollars, 0 or more) to its key's value (absent: 0)."""

    async def get_spend(self, keys: Collection[SpendKey]) -> dict[SpendKey, int]:
        """The value of each of ``keys`` that has one (the others are left out)."""

    async def reserve_spend(self, hold: Hold, limit_usd: float, now: float) -> Reserved:
        """Add ``hold`` to its key when the spend, the holds in force at ``now`` and it
        stay within ``limit_usd`` (``domain.budget.refusal``), atomically; else nothing."""

    async def settle_spend(self, hold: Hold, charges: Mapping[SpendKey, int]) -> None:
        """Add ``charges`` (as ``add_spend``) and drop ``hold``. When it raises, the
        charges were not added (the hold may remain, until it expires)."""

    async def release_spend(self, hold: Hold) -> None:
        """Drop ``hold`` (nothing when it is gone)."""
