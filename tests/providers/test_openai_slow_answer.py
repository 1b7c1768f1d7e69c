"""An agent whose model takes longer than httpx's default timeout (5 s) to answer still
answers within its own ``timeout_s``: a real model's long answer, a slow judge. Its
client's own timeouts were httpx's defaults, so every call over 5 s failed as a timeout
(said to be of ``timeout_s``), in deliberations, the gateway and its checks alike."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentladder.domain.agents import AgentConfig
from agentladder.providers.base import ProposeRequest
from agentladder.providers.openai import OpenAIProvider
from agentladder.providers.settings import OpenAISettings
from agentladder.services.gateway.upstream import Tally, open_stream
from tests.gateway.provider import Providers
from tests.served import free_port

SLOW_MS = 6_000  # over httpx's default 5 s
ASK = {"messages": [{"role": "user", "content": "hi"}]}


def test_an_answer_slower_than_five_seconds_arrives_within_timeout_s(tmp_path: Path) -> None:
    """A relayed answer, a stream and a proposal each taking 6 s, with ``timeout_s`` 30,
    all arrive (the three at once, one client)."""
    providers = Providers(tmp_path, free_port())
    try:
        settings = OpenAISettings(
            base_url=providers.base_url, model=f"slow:{SLOW_MS}", timeout_s=30
        )
        provider = OpenAIProvider(AgentConfig(name="alpha", model_name="alpha-model"), settings)

        async def main() -> tuple[int, bytes, str]:
            async def streamed() -> bytes:
                opened = await open_stream(provider, {**ASK, "stream": True}, Tally())
                await opened.response.aclose()
                return opened.first

            try:
                relayed, first, proposal = await asyncio.gather(
                    provider.relay(ASK),
                    streamed(),
                    provider.propose(
                        ProposeRequest(deliberation_id="d1", round=1, user_query="hi")
                    ),
                )
                return relayed[0], first, proposal.content
            finally:
                await provider.aclose()

        status, first, content = asyncio.run(main())
        assert status == 200
        assert b"data:" in first
        assert content == "answer from slow"
    finally:
        providers.stop()
