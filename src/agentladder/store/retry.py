"""Retrying a compare-and-set: the one place that does it.

A service reads a value with its revision, computes the new value with a pure rule and
writes it naming that revision. When another writer won the race the store raises
``RevisionConflict``; ``retry_on_conflict`` runs the whole read-compute-write again,
with a short randomized back-off, a bounded number of times.

A ``WriteTally`` given to it counts, by operation, the attempts, the conflicts and the
operations that gave up (``/metrics``: ``agentladder_store_cas_*``): how often writers
race for the same key, the first sign of a serialization point under load. The NATS
store keeps one for its own retries, the orchestrator one for its side effects (which
also counts the side effects' failed attempts, retried with back-off, by kind).
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from agentladder.errors import RevisionConflict

__all__ = ["WriteTally", "retry_on_conflict"]

T = TypeVar("T")


@dataclass
class WriteTally:
    """Compare-and-set attempts, conflicts, and operations that gave up, by operation;
    side effects' failed attempts retried, by kind."""

    attempts: Counter[str] = field(default_factory=Counter)
    conflicts: Counter[str] = field(default_factory=Counter)
    exhausted: Counter[str] = field(default_factory=Counter)
    retried: Counter[str] = field(default_factory=Counter)


async def retry_on_conflict(
    attempt: Callable[[], Awaitable[T]],
    *,
    op: str,
    tally: WriteTally | None = None,
    attempts: int = 100,
    base_delay: float = 0.001,
    max_delay: float = 0.05,
    rng: random.Random | None = None,
) -> T:
    """Run ``attempt`` until it does not raise ``RevisionConflict`` (at most ``attempts``);
    ``op`` names the operation in ``tally``."""
    jitter = rng or random.Random()
    counts = tally or WriteTally()
    for number in range(1, attempts + 1):
        counts.attempts[op] += 1
        try:
            return await attempt()
        except RevisionConflict:
            counts.conflicts[op] += 1
            if number == attempts:
                counts.exhausted[op] += 1
                raise
            delay = min(max_delay, base_delay * 2 ** min(number, 10))
            await asyncio.sleep(delay * jitter.random())
    raise AssertionError("unreachable")  # pragma: no cover
