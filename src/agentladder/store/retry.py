"""Retrying a compare-and-set: the one place that does it.

A service reads a value with its revision, computes the new value with a pure rule and
writes it naming that revision. When another writer won the race the store raises
``RevisionConflict``; ``retry_on_conflict`` runs the whole read-compute-write again,
with a short randomized back-off, a bounded number of times.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

from agentladder.errors import RevisionConflict

__all__ = ["retry_on_conflict"]

T = TypeVar("T")


async def retry_on_conflict(
    attempt: Callable[[], Awaitable[T]],
    *,
    attempts: int = 100,
    base_delay: float = 0.001,
    max_delay: float = 0.05,
    rng: random.Random | None = None,
) -> T:
    """Run ``attempt`` until it does not raise ``RevisionConflict`` (at most ``attempts``)."""
    jitter = rng or random.Random()
    for number in range(1, attempts + 1):
        try:
            return await attempt()
        except RevisionConflict:
            if number == attempts:
                raise
            delay = min(max_delay, base_delay * 2 ** min(number, 10))
            await asyncio.sleep(delay * jitter.random())
    raise AssertionError("unreachable")  # pragma: no cover
