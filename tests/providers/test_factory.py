"""make_provider: the backend block of an agent chooses its provider."""

from __future__ import annotations

import asyncio

import httpx

from agentladder.domain.agents import AgentConfig
from agentladder.providers.factory import make_provider
from agentladder.providers.openai import OpenAIProvider
from agentladder.providers.settings import OpenAISettings, SimulatedSettings
from agentladder.providers.simulated import SimulatedProvider

AGENT = AgentConfig(name="sim_a", model_name="gpt-4o")


def test_simulated_backend_gives_a_simulated_provider_named_after_the_agent() -> None:
    """A simulated backend gives a SimulatedProvider with the agent's name and settings."""
    backend = SimulatedSettings(quality=7.5)
    provider = make_provider(AGENT, backend)
    assert isinstance(provider, SimulatedProvider)
    assert (provider.agent_id, provider.settings) == ("sim_a", backend)


def test_openai_backend_gives_an_openai_provider_with_the_given_client() -> None:
    """An openai backend gives an OpenAIProvider that uses the given client and model."""

    async def body() -> None:
        async with httpx.AsyncClient() as client:
            backend = OpenAISettings(base_url="http://127.0.0.1:9/v1")
            provider = make_provider(AGENT, backend, client=client)
            assert isinstance(provider, OpenAIProvider)
            assert provider.model == "gpt-4o"
            assert provider.url == "http://127.0.0.1:9/v1/chat/completions"
            await provider.aclose()
            assert not client.is_closed

    asyncio.run(body())
