"""Which agents the Oracle knows before their first event: the configured and the
registered ones.

A configured or registered agent has a profile from the start: until its first Oracle
event nothing is stored for it, and its profile is built when read (``new_profile``:
rookie, 0 XP, the provider and model it declared). Nothing is written, so replaying the
stored events (``oracle verify``) stays exact on every store: a profile is stored with
the first event that changes it, from the same starting point.
"""

from __future__ import annotations

from collections.abc import Mapping

from agentladder.domain.agents import AgentConfig
from agentladder.store.base import Store

__all__ = ["declared"]


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
