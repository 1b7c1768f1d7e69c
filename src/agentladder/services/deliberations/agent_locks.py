"""One instance's locks on agents, so that its own side effects do not race each other.

A deliberation's side effects read, fold and compare-and-set the state of each of its
agents (the ranking's stats, the Oracle's events, the skill states). When one instance
applies many deliberations of the same few agents at once, every commit invalidates the
reads of the others sharing an agent, and most attempts are lost to conflicts and
back-off: with 20 agents and 5 in each deliberation, four in five of any two overlap.
Holding the agents' locks while applying lets deliberations on disjoint agents proceed
together and queues the others in arrival order; the compare-and-set still guards against
other instances and other writers (docs/orchestrator.md, "Side effects").

Locks are taken in sorted order (no deadlock between two holders of overlapping sets) and
dropped when nobody holds or waits for them (the map stays as small as the work in flight).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator, Iterable

__all__ = ["AgentLocks"]


class AgentLocks:
    """Keyed locks on agent ids, held together by ``hold``."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: Counter[str] = Counter()  # holders and waiters, per agent

    def __len__(self) -> int:
        """How many agents have a lock now (held or waited for)."""
        return len(self._locks)

    @contextlib.asynccontextmanager
    async def hold(self, agents: Iterable[str]) -> AsyncIterator[None]:
        """Hold the locks of ``agents`` (each once, in sorted order) for the block."""
        names = sorted(set(agents))
        for name in names:
            self._users[name] += 1
            self._locks.setdefault(name, asyncio.Lock())
        held: list[str] = []
        try:
            for name in names:
                await self._locks[name].acquire()
                held.append(name)
            yield
        finally:
            for name in reversed(held):
                self._locks[name].release()
            for name in names:
                self._users[name] -= 1
                if not self._users[name]:
                    del self._users[name]
                    del self._locks[name]
