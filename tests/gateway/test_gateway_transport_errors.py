"""A transport failure without text of its own still says what failed (the 503 naming
each agent tried and why had an empty reason for a connection reset)."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from agentladder.domain.agents import AgentConfig
from agentladder.errors import ProviderError
from agentladder.providers.openai import OpenAIProvider
from agentladder.providers.settings import OpenAISettings
from agentladder.services.gateway.upstream import Tally, open_stream

BODY = {"model": "x", "messages": [{"role": "user", "content": "hi"}]}


def _provider() -> OpenAIProvider:
    """A provider whose every request fails with an httpx error that has no text."""

    def reset(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadError("", request=request)

    client = httpx.AsyncClient(transport=httpx.MockTransport(reset))
    settings = OpenAISettings(base_url="http://agent.test/v1", model="m", timeout_s=5)
    return OpenAIProvider(AgentConfig(name="alpha"), settings, client=client)


def test_a_relay_that_fails_without_text_names_the_error_type() -> None:
    """A non-streamed request: the ProviderError names ``ReadError``."""
    provider = _provider()
    with pytest.raises(ProviderError) as failed:
        asyncio.run(provider.relay(BODY))
    assert str(failed.value) == "http: http://agent.test/v1/chat/completions: ReadError"


def test_a_stream_that_fails_without_text_names_the_error_type() -> None:
    """A streamed request: the ProviderError names ``ReadError``."""
    provider = _provider()
    with pytest.raises(ProviderError) as failed:
        asyncio.run(open_stream(provider, {**BODY, "stream": True}, Tally()))
    assert str(failed.value) == "http: http://agent.test/v1/chat/completions: ReadError"
