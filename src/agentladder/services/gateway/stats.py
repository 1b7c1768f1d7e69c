"""The gateway's provider calls folded into the agents' stats, off the request path.

Each call (each attempt of a request) is one submission, as a deliberation's propose or
evaluate call is: ``tasks_completed`` or ``tasks_failed`` and the latency window
(``domain/stats.record_submission``). They are kept in memory and written every
``FLUSH_S`` seconds, each agent's stats compare-and-set on its revision (retried on a
conflict), so a request never waits for the store and 50 requests to one agent are one
write. What a process that dies had not written yet (at most ``FLUSH_S`` of calls) is
lost: the stats are a running record of calls, not an acknowledged write; the health,
metrics and the answer do not depend on it.
"""

from __future__ import annotations

from agentladder.domain.ranking import Submission
from agentladder.domain.stats import AgentPerformanceStats, record_submission
from agentladder.errors import StoreUnavailable
from agentladder.services.gateway.flushing import FlushLoop
from agentladder.store.base import Store
from agentladder.store.retry import retry_on_conflict

__all__ = ["FLUSH_S", "StatsRecorder"]

FLUSH_S = 1.0
"""Seconds between two writes of the calls made meanwhile."""


class StatsRecorder:
    """Submissions in, folded into the store's stats in batches."""

    def __init__(self, store: Store, flush_s: float = FLUSH_S) -> None:
        self.store = store
        self.flush_s = flush_s
        self._pending: list[Submission] = []
        self._loop = FlushLoop("writing the gateway's stats", self.flush, flush_s)

    def add(self, submission: Submission) -> None:
        """One call made; written at the next flush."""
        self._pending.append(submission)

    async def flush(self) -> None:
        """Write every call kept so far (kept again when the store is unavailable)."""
        if not self._pending:
            return
        batch, self._pending = self._pending, []
        agents = sorted({s.agent_id for s in batch})

        async def attempt() -> None:
            found = await self.store.get_many_stats(agents)
            updates = {}
            for agent in agents:
                current = found.get(agent)
                stats = AgentPerformanceStats() if current is None else current.value
                for submission in batch:
                    if submission.agent_id == agent:
                        stats = record_submission(
                            stats, latency_ms=submission.latency_ms, ok=submission.ok
                        )
                updates[agent] = (stats, 0 if current is None else current.revision)
            await self.store.commit_stats(updates)

        try:
            await retry_on_conflict(attempt, op="gateway stats")
        except StoreUnavailable:
            self._pending = batch + self._pending  # the next flush tries again
            raise

    def start(self) -> None:
        """Flush every ``flush_s`` seconds in the background."""
        self._loop.start()

    async def close(self) -> None:
        """Stop the loop (a write under way ends first) and write what is left."""
        await self._loop.close()
