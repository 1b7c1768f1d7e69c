"""``agentladder agent``: one configured agent as its own process.

It connects to the server, answers the propose and evaluate tasks the orchestrator sends
it with its own backend (an OpenAI-compatible endpoint or a simulated model), and
heartbeats every interval, until SIGINT or SIGTERM. The transport is NATS
(``--server nats://host:port``, see ``services/agents/nats.py`` for the subjects) or the
service's HTTP API (``--server http://host:port``, with the agent's bearer token; see
``services/agents/http.py``).
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import httpx

import nats
from agentladder.config import load_settings
from agentladder.domain.agents import AgentConfig
from agentladder.errors import InvalidInput
from agentladder.providers.factory import make_provider
from agentladder.services.agents.http import serve_agent_over_http
from agentladder.services.agents.nats import serve_agent
from agentladder.services.agents.wire import DEFAULT_CONCURRENCY

__all__ = ["run_agent_process"]


async def run_agent_process(
    config: Path,
    name: str,
    server: str,
    prefix: str,
    *,
    token: str | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
) -> None:
    """Serve the agent ``name`` of ``config`` through ``server`` (NATS or HTTP)."""
    settings = load_settings(config)
    agent = settings.agent(name)
    if agent is None:
        raise InvalidInput("name", name, f"is not an agent of {config}")
    if agent.backend is None:
        raise InvalidInput(f"agents[{name}].backend", None, "is needed to answer tasks")
    over_http = server.startswith(("http://", "https://"))
    if not over_http and not server.startswith(("nats://", "tls://")):
        raise InvalidInput("server", server, "must be a nats://, tls://, http:// or https:// URL")
    declared = AgentConfig.model_validate(agent.model_dump(exclude={"backend", "remote"}))
    provider = make_provider(declared, agent.backend)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    if over_http:
        headers = {} if token is None else {"authorization": f"Bearer {token}"}
        try:
            async with httpx.AsyncClient(base_url=server, headers=headers, timeout=30) as client:
                await serve_agent_over_http(
                    client, declared, provider,
                    interval_s=settings.orchestrator.heartbeat_interval_s, stop=stop,
                    concurrency=concurrency,
                )  # fmt: skip
        finally:
            await provider.aclose()
        return
    nc = await nats.connect(server.split("?", maxsplit=1)[0], max_reconnect_attempts=-1)
    try:
        await serve_agent(
            nc,
            prefix,
            declared,
            provider,
            interval_s=settings.orchestrator.heartbeat_interval_s,
            stop=stop,
            concurrency=concurrency,
        )
    finally:
        await provider.aclose()
        await nc.drain()
