"""One provider per configured agent, from the ``backend:`` block of its config.

``call_cost`` is re-exported here: it prices any provider's ``Usage`` with the agent's
per-million-token prices, whatever the backend.
"""

from __future__ import annotations

from typing import assert_never

import httpx

from agentladder.domain.agents import AgentConfig
from agentladder.providers.base import Provider
from agentladder.providers.openai import OpenAIProvider, call_cost
from agentladder.providers.settings import OpenAISettings, SimulatedSettings
from agentladder.providers.simulated import SimulatedProvider

__all__ = ["call_cost", "make_provider"]


def make_provider(
    agent: AgentConfig,
    backend: OpenAISettings | SimulatedSettings,
    *,
    client: httpx.AsyncClient | None = None,
) -> Provider:
    """The provider that asks ``agent`` through ``backend``.

    ``client`` is shared by OpenAI-compatible providers (connection pooling); the caller
    closes it. Without it each such provider opens its own and closes it in ``aclose``.
    Simulated providers ignore it.
    """
    if isinstance(backend, SimulatedSettings):
        return SimulatedProvider(agent.name, backend)
    if isinstance(backend, OpenAISettings):
        return OpenAIProvider(agent, backend, client=client)
    assert_never(backend)
