"""Which agents the Oracle knows: the configured, the registered, and those with a profile
(judged before, or imported).

A configured or registered agent has a profile from the start: until its first Oracle
event nothing is stored for it, and its profile is built when read (``new_profile``:
rookie, 0 XP, the provider and model it declared). Nothing is written, so replaying the
stored events (``oracle verify``) stays exact on every store: a profile is stored with
the first event that changes it, from the same starting point.

An agent id the Oracle does not know is most often a typo (``chalie`` for ``charlie``):
a judgment or award of one is refused (``UnknownAgent``, naming the closest known ids)
unless the caller says it means a new agent (``new_agent``), or
``oracle.accept_unregistered`` is true, or the store knows no agent at all yet (the first
judgment of a new store makes the first agent).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection, Mapping

from agentladder.domain.agents import AgentConfig
from agentladder.domain.suggestions import Names, closest, did_you_mean
from agentladder.errors import NotFound, UnknownAgent
from agentladder.services.offload import off_loop
from agentladder.store.base import Store

__all__ = [
    "KNOWN_RELOAD_S",
    "KnownNames",
    "declared",
    "known_ids",
    "not_found",
    "refusal",
    "unknown_among",
]

KNOWN_RELOAD_S = 5.0
"""The least time between two reads of the known agents for suggestions (``KnownNames``)."""


async def declared(
    store: Store, configured: Mapping[str, AgentConfig], agent_id: str
) -> AgentConfig | None:
    """The declaration of ``agent_id`` if it is configured (the configuration wins) or
    registered (its last heartbeat); ``None`` for an agent nobody registered."""
    config = configured.get(agent_id)
    if config is not None:
        return config
    registration = await store.get_registration(agent_id)
    return None if registration is None else registration.config


async def unknown_among(
    store: Store, configured: Mapping[str, AgentConfig], agent_ids: Collection[str]
) -> set[str]:
    """Those of ``agent_ids`` nobody configured or registered and that have no profile."""
    left = {agent for agent in agent_ids if agent not in configured}
    if not left:
        return set()
    registered = await store.get_many_registrations(left)
    left -= set(registered)
    if not left:
        return set()
    profiles = await store.get_many_profiles(left)
    return left - set(profiles)


async def known_ids(store: Store, configured: Mapping[str, AgentConfig]) -> list[str]:
    """Every agent the Oracle knows, by name."""
    registered = {r.agent_id for r in await store.list_registrations()}
    profiled = {p.id for p in await store.list_profiles()}
    return sorted(set(configured) | registered | profiled)


def refusal(agent_id: str, known: Collection[str]) -> UnknownAgent:
    """The refusal of a judgment of ``agent_id``, which nobody knows."""
    near = closest(agent_id, known)
    hint = f"{did_you_mean(near)} " if near else ""
    return UnknownAgent(
        agent_id,
        near,
        f"is not a known agent (configured, registered or judged before); {hint}to judge a"
        " new agent say so (new_agent: true; judge --new-agent), or set"
        " oracle.accept_unregistered: true",
    )


class KnownNames:
    """The agents the Oracle knows (``known_ids``) as an index for suggestions
    (``domain/suggestions.Names``), read again at most once every ``KNOWN_RELOAD_S``: a
    404 anyone may ask for costs a lookup in the index, not a read of every profile (a
    suggestion may miss an agent created in the last seconds)."""

    def __init__(
        self, store: Store, configured: Mapping[str, AgentConfig],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:  # fmt: skip
        self.store = store
        self.configured = configured
        self._clock = clock
        self._ids: frozenset[str] = frozenset()
        self._names = Names(())
        self._read_at: float | None = None
        self._lock = asyncio.Lock()

    async def index(self) -> tuple[frozenset[str], Names]:
        """The known ids and their index, read again when older than ``KNOWN_RELOAD_S``
        (concurrent callers share one read; the index is built off the event loop)."""
        async with self._lock:
            now = self._clock()
            if self._read_at is None or now - self._read_at >= KNOWN_RELOAD_S:
                ids = await known_ids(self.store, self.configured)
                self._names = await off_loop(Names, ids)
                self._ids = frozenset(ids)
                self._read_at = now
        return self._ids, self._names


async def not_found(kind: str, agent_id: str, known: KnownNames) -> NotFound:
    """``NotFound`` of ``kind`` (``profile``, ``agent``, ``skill``) for ``agent_id``,
    offering the closest agents the Oracle knows (``domain/suggestions.py``; none when
    ``agent_id`` is one of them: it exists, it has no ``kind``)."""
    ids, names = await known.index()
    return NotFound(kind, agent_id, [] if agent_id in ids else names.closest(agent_id))
