"""An agent process answers several tasks at once: one hanging model call stops no other.

Over NATS (a real nats-server) and over HTTP (the API's long poll, in-process): a task
whose model hangs is sent first, then one it answers at once. With ``concurrency`` 2 the
second is answered while the first still hangs; with 1 it waits behind it and times out
(which shows the test can tell the two apart).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable

import httpx
import pytest

import nats
from agentladder.api.app import create_app
from agentladder.config import AgentSettings, Settings
from agentladder.domain.agents import AgentConfig
from agentladder.errors import ProviderError
from agentladder.natsserver import NatsServer
from agentladder.providers.base import EvaluateRequest, Evaluation, Proposal, ProposeRequest
from agentladder.providers.settings import SimulatedSettings
from agentladder.services.agents.http import serve_agent_over_http
from agentladder.services.agents.nats import NatsAgentProvider, serve_agent
from agentladder.services.container import build_services

AGENT = AgentConfig(name="far")
HANG = ProposeRequest(deliberation_id="d1", round=1, user_query="hang")
FAST = ProposeRequest(deliberation_id="d2", round=1, user_query="fast")
Ask = Callable[[ProposeRequest, float], Awaitable[Proposal]]


class HangingModel:
    """Hangs on the query "hang" until closed; answers any other at once."""

    def __init__(self) -> None:
        self.released = asyncio.Event()

    async def propose(self, request: ProposeRequest) -> Proposal:
        if request.user_query == "hang":
            await self.released.wait()
        return Proposal(content=f"answer to {request.user_query}")

    async def evaluate(self, request: EvaluateRequest) -> Evaluation:
        return Evaluation(score=5.0, rationale="fine")

    async def aclose(self) -> None:
        self.released.set()


async def hang_then_fast(ask: Ask) -> str | None:
    """Send the hanging task, then the fast one; the fast one's answer, or the kind of its
    failure."""
    hanging = asyncio.ensure_future(ask(HANG, 30.0))
    await asyncio.sleep(0.2)  # the hanging task is taken first
    try:
        return (await ask(FAST, 1.5)).content
    except ProviderError as error:
        return error.kind
    finally:
        hanging.cancel()
        await asyncio.gather(hanging, return_exceptions=True)


@pytest.mark.parametrize(("concurrency", "expected"), [(2, "answer to fast"), (1, "timeout")])
def test_over_nats(session_nats_server: NatsServer, concurrency: int, expected: str | None) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}"

    async def body() -> str | None:
        nc = await nats.connect(session_nats_server.url)
        model, stop = HangingModel(), asyncio.Event()
        agent = asyncio.ensure_future(
            serve_agent(
                nc, prefix, AGENT, model, interval_s=5.0, stop=stop, concurrency=concurrency
            )
        )
        try:
            await asyncio.sleep(0.2)  # subscribed

            async def ask(request: ProposeRequest, timeout_s: float) -> Proposal:
                return await NatsAgentProvider(nc, prefix, "far", timeout_s=timeout_s).propose(
                    request
                )

            return await hang_then_fast(ask)
        finally:
            stop.set()
            await model.aclose()
            await agent
            await nc.close()

    assert asyncio.run(body()) == expected


@pytest.mark.parametrize(("concurrency", "expected"), [(2, "answer to fast"), (1, "timeout")])
def test_over_http(concurrency: int, expected: str | None) -> None:
    settings = Settings(
        agents=[AgentSettings(name="far", remote=True, backend=SimulatedSettings())]
    )

    async def body() -> str | None:
        services = await build_services(settings, store_url="memory://")
        transport = httpx.ASGITransport(app=create_app(services), client=("127.0.0.1", 5000))
        model, stop = HangingModel(), asyncio.Event()
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            agent = asyncio.ensure_future(
                serve_agent_over_http(
                    client, AGENT, model, interval_s=5.0, stop=stop, concurrency=concurrency
                )
            )
            try:
                board = services.tasks

                async def ask(request: ProposeRequest, timeout_s: float) -> Proposal:
                    try:
                        data = await board.ask(
                            "far", "propose", request.model_dump_json().encode(), timeout_s
                        )
                    except TimeoutError as error:
                        raise ProviderError("timeout", "no answer") from error
                    return Proposal.model_validate_json(data)

                return await hang_then_fast(ask)
            finally:
                stop.set()
                await model.aclose()
                await agent
                await services.close()

    assert asyncio.run(body()) == expected
