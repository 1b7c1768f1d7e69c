"""The body of ``GET /agents``: each agent's JSON object, built from stored parts.

An agent's object is ``registration_parts``'s head (its declared fields and cost per
round, as ``AgentConfig`` encodes them), its status, the tail (``first_seen``,
``last_seen``, ``remote``) and its rank stats as ``AgentPerformanceStats`` encodes them
(the stats' defaults when it has none): the same bytes, field for field, as the API's
``AgentOut``. SQLite keeps the head and tail beside each registration and builds every
object in one query; the other stores build them from their reads with
``listing_from_reads``, reusing an agent's object while nothing it shows changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from agentladder.domain.registry import AgentStatus, status_within
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.store.base import Store
from agentladder.store.records import Registration, Versioned

__all__ = [
    "NO_STATS_JSON",
    "AgentListingCache",
    "agent_json",
    "listing_body",
    "listing_from_reads",
    "registration_parts",
]

NO_STATS_JSON = AgentPerformanceStats().model_dump_json()
"""The stats an agent without rank stats shows."""


def registration_parts(registration: Registration) -> tuple[str, str]:
    """The parts of an agent's object that depend on its registration only: the head,
    up to ``"status":"``, and the tail, from the status's closing quote to ``"stats":``."""
    head = registration.config.model_dump_json()[:-1] + ',"status":"'
    tail = '",' + registration.model_dump_json(exclude={"config"})[1:-1] + ',"stats":'
    return head, tail


def agent_json(parts: tuple[str, str], status: AgentStatus, stats_json: str | None) -> str:
    """One agent's object: its registration's parts, its status and its stats' JSON."""
    stats = NO_STATS_JSON if stats_json is None else stats_json
    return parts[0] + status.value + parts[1] + stats + "}"


def listing_body(objects: Iterable[str]) -> bytes:
    """``{"agents":[...]}`` around the agents' objects."""
    return ('{"agents":[' + ",".join(objects) + "]}").encode()


@dataclass(frozen=True, slots=True)
class _Fragment:
    registration: Registration
    status: AgentStatus
    revision: int
    data: str


class AgentListingCache:
    """One agent's object per agent, reused while its registration (the same decoded
    object, or an equal one), its status and its stats revision are unchanged."""

    def __init__(self) -> None:
        self._fragments: dict[str, _Fragment] = {}

    def fragment(
        self,
        registration: Registration,
        status: AgentStatus,
        stats: Versioned[AgentPerformanceStats] | None,
    ) -> str:
        """One agent's object, built and encoded again only when what it shows changed."""
        revision = -1 if stats is None else stats.revision
        known = self._fragments.get(registration.agent_id)
        if (
            known is not None
            and known.status is status
            and known.revision == revision
            and (known.registration is registration or known.registration == registration)
        ):
            return known.data
        stats_json = None if stats is None else stats.value.model_dump_json()
        data = agent_json(registration_parts(registration), status, stats_json)
        self._fragments[registration.agent_id] = _Fragment(registration, status, revision, data)
        return data

    def body(
        self,
        agents: Sequence[tuple[Registration, AgentStatus]],
        stats: Mapping[str, Versioned[AgentPerformanceStats]],
        *,
        everyone: bool = True,
    ) -> bytes:
        """The listing of ``agents`` (registration and status), in their order. With
        ``everyone`` (every registered agent) the objects of agents gone are dropped."""
        if everyone:
            listed = {registration.agent_id for registration, _ in agents}
            for gone in [agent for agent in self._fragments if agent not in listed]:
                del self._fragments[gone]
        return listing_body(
            self.fragment(registration, status, stats.get(registration.agent_id))
            for registration, status in agents
        )


async def listing_from_reads(
    store: Store, cache: AgentListingCache, now: float, online_window_s: float
) -> bytes:
    """``Store.agent_listing_json`` from the store's reads of registrations and stats."""
    registrations = await store.list_registrations()
    stats = await store.list_stats()
    agents = [(r, status_within(r.last_seen, now, online_window_s)) for r in registrations]
    return cache.body(agents, stats)
