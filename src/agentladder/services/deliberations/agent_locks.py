"""One instance's locks on agents, so that its own side effects do not race each other.

A deliberation's side effects read, fold and compare-and-set the state of each of its
agents (the ranking's stats, the Oracle's events, the skill states). When one instance
applies many deliberations of the same few agents at once, every commit invalidates the
reads of the others sharing an agent, and most attempts are lost to conflicts and
back-off: with 20 agents and 5 in each deliberation, four in five of any two overlap.
Holding the agents' locks while applying lets deliberations on disjoint agents proceed
together and queues the others in arrival order; the compare-and-set still guards against
other instances and other writers (docs/orchestrator.md, "Side effects").

Each agent has a queue. A holder joins the queues of all its agents at once (one step of
the event loop) and goes when it is first in every one of them, so each agent's holders
go in the order they arrived. (Taking the locks one by one in sorted order did not: a
holder waiting for its first agent had not queued for the others yet, and later holders
took those before it, without bound.) No deadlock: of the holders waiting, the one that
arrived first is first in all its queues. A queue is dropped when it is empty (the map
stays as small as the work in flight).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Iterable

__all__ = ["AgentLocks"]


class _Holder:
    """One ``hold``: its agents and the future set when it may go."""

    __slots__ = ("go", "names")

    def __init__(self, names: list[str], go: asyncio.Future[None]) -> None:
        self.names = names
        self.go = go


class AgentLocks:
    """Keyed locks on agent ids, held together by ``hold``."""

    def __init__(self) -> None:
        self._queues: dict[str, deque[_Holder]] = {}

    def __len__(self) -> int:
        """How many agents have a lock now (held or waited for)."""
        return len(self._queues)

    @contextlib.asynccontextmanager
    async def hold(self, agents: Iterable[str]) -> AsyncIterator[None]:
        """Hold the locks of ``agents`` (each once) for the block."""
        holder = _Holder(sorted(set(agents)), asyncio.get_running_loop().create_future())
        for name in holder.names:
            self._queues.setdefault(name, deque()).append(holder)
        self._wake(holder)
        try:
            await holder.go
            yield
        finally:  # done, failed, or cancelled while it waited: it leaves every queue
            self._leave(holder)

    def _wake(self, holder: _Holder) -> None:
        """Let ``holder`` go if it is first in all its queues."""
        if holder.go.done():
            return
        if all(self._queues[name][0] is holder for name in holder.names):
            holder.go.set_result(None)

    def _leave(self, holder: _Holder) -> None:
        """``holder`` leaves its queues; those now first in them may go."""
        firsts: list[_Holder] = []
        for name in holder.names:
            queue = self._queues[name]
            queue.remove(holder)  # the first, unless it was cancelled while it waited
            if queue:
                firsts.append(queue[0])
            else:
                del self._queues[name]
        for first in firsts:
            self._wake(first)
