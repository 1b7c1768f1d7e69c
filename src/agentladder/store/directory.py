"""The body of ``GET /agents/directory``: agents filtered, sorted and paged.

The directory shows the same object per agent as ``GET /agents`` (``store/listing.py``),
for the agents that have capability ``tag`` and are of ``provider`` (when given), whose
status is ``online`` (when given) and whose rank is at least ``min_rank``; sorted by name,
by rank or average score (highest first), or by estimated cost per round (lowest first),
ties by name; then ``offset`` agents skipped and at most ``limit`` kept. An agent without
rank stats has the default stats (rank 0, average score 0).

``directory_from_reads`` builds it from the store's reads, the reference the stores that
keep their data as documents use; the SQLite store builds the same bytes in one query.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentladder.domain.registry import AgentStatus, status_within
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.store.base import Store
from agentladder.store.listing import AgentListingCache
from agentladder.store.records import DirectoryQuery, Registration

__all__ = ["directory_from_reads"]

_NO_STATS = AgentPerformanceStats()


async def directory_from_reads(
    store: Store,
    cache: AgentListingCache,
    now: float,
    online_window_s: float,
    query: DirectoryQuery,
) -> bytes:
    """``Store.agent_directory_json`` from the store's reads of registrations and stats
    (the tag and provider filters run in the store; stats are read for those left only)."""
    registrations = await store.list_registrations(tag=query.tag, provider=query.provider)
    agents = [(r, status_within(r.last_seen, now, online_window_s)) for r in registrations]
    if query.online is not None:
        agents = [(r, s) for r, s in agents if (s is AgentStatus.ONLINE) == query.online]
    if query.tag is None and query.provider is None:
        stats = await store.list_stats()
    else:
        stats = await store.get_many_stats([r.agent_id for r, _ in agents])

    def of(registration: Registration) -> AgentPerformanceStats:
        found = stats.get(registration.agent_id)
        return _NO_STATS if found is None else found.value

    if query.min_rank:
        agents = [(r, s) for r, s in agents if of(r).rank >= query.min_rank]
    keys: dict[str, Callable[[Registration], tuple[Any, ...]]] = {
        "name": lambda r: (r.agent_id,),
        "rank": lambda r: (-of(r).rank, r.agent_id),
        "avg_score": lambda r: (-of(r).avg_score, r.agent_id),
        "cost": lambda r: (r.config.estimated_cost_per_round, r.agent_id),
    }
    agents.sort(key=lambda agent: keys[query.sort](agent[0]))
    end = None if query.limit is None else query.offset + query.limit
    return cache.body(agents[query.offset : end], stats, everyone=False)
