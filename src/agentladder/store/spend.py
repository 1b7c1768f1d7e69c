"""What the gateway's clients spent: the small storage interface of the budgets.

One value per (client, period key) (``domain/budget.py``: ``day-2026-12-05``,
``month-2026-12``, ``total``), in whole nano-dollars. ``add_spend`` adds to several at
once; an addition is an atomic increment (SQLite: one ``UPSERT`` per key in one
transaction; NATS: compare-and-set on the key's revision, retried; memory: a dict), so
instances that add to the same key at the same time lose nothing. Every store (memory,
SQLite, NATS) implements it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Protocol

__all__ = ["SpendKey", "SpendStore"]

SpendKey = tuple[str, str]
"""The client (its token's name) and the period's key."""


class SpendStore(Protocol):
    """The clients' spend per period."""

    async def add_spend(self, charges: Mapping[SpendKey, int]) -> None:
        """Add each charge (nano-dollars, 0 or more) to its key's value (absent: 0)."""

    async def get_spend(self, keys: Collection[SpendKey]) -> dict[SpendKey, int]:
        """The value of each of ``keys`` that has one (the others are left out)."""
