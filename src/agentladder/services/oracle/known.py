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

from collections.abc import Collection, Mapping

from agentladder.domain.agents import AgentConfig
from agentladder.domain.suggestions import closest, did_you_mean
from agentladder.errors import NotFound, UnknownAgent
from agentladder.store.base import Store

__all__ = [
    "declared",
    "known_ids",
    "not_found",
    "refusal",
    "unknown_among",
]


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


async def not_found(
    kind: str, agent_id: str, store: Store, configured: Mapping[str, AgentConfig]
) -> NotFound:
    """``NotFound`` of ``kind`` (``profile``, ``agent``, ``skill``) for ``agent_id``,
    offering the closest agents the Oracle knows (``domain/suggestions.py``; none when
    ``agent_id`` is one of them: it exists, it has no ``kind``). Read only on this path,
    the error's."""
    known = await known_ids(store, configured)
    return NotFound(kind, agent_id, [] if agent_id in known else closest(agent_id, known))
