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
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

import nats
from agentladder.config import load_settings
from agentladder.domain.agents import AgentConfig
from agentladder.domain.suggestions import hint
from agentladder.errors import InvalidInput
from agentladder.providers.base import Provider
from agentladder.providers.factory import make_provider
from agentladder.redaction import redact_logs, remember, scrub
from agentladder.secret_values import known_secrets, url_secrets
from agentladder.services.agents.http import serve_agent_over_http
from agentladder.services.agents.nats import serve_agent
from agentladder.services.agents.wire import DEFAULT_CONCURRENCY

__all__ = ["run_agent_process"]


def _silent(_: str) -> None:
    """Tell nobody."""


async def run_agent_process(
    config: Path,
    name: str,
    server: str,
    prefix: str,
    *,
    token: str | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    say: Callable[[str], None] = _silent,
) -> None:
    """Serve the agent ``name`` of ``config`` through ``server`` (NATS or HTTP); ``say``
    is told when it starts, connects (its first heartbeat accepted) and stops."""
    settings = load_settings(config)
    remember([*known_secrets(settings), *url_secrets(server), token])  # redaction.py
    redact_logs()
    shown = scrub(server)  # no user, password or token of the server's URL in a message
    agent = settings.agent(name)
    if agent is None:
        typo = hint(name, [a.name for a in settings.agents])
        raise InvalidInput(
            "name", name, f"is not an agent of {config}{'; ' + typo if typo else ''}"
        )
    if agent.backend is None:
        raise InvalidInput(f"agents[{name}].backend", None, "is needed to answer tasks")
    over_http = server.startswith(("http://", "https://"))
    if not over_http and not server.startswith(("nats://", "tls://")):
        raise InvalidInput("server", server, "must be a nats://, tls://, http:// or https:// URL")
    declared = AgentConfig.model_validate(agent.model_dump(exclude={"backend", "remote"}))
    provider = make_provider(declared, agent.backend)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    stopped_by: list[str] = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, _stopper(stop, stopped_by, signum.name))
    say(f"agent {name} starting: {agent.backend.kind} backend, joining {shown}"
        f" ({concurrency} tasks at once)")  # fmt: skip
    heard = _Connected(name, shown, say)
    interval_s = settings.orchestrator.heartbeat_interval_s
    try:
        await _serve(server, prefix, declared, provider, interval_s, stop, concurrency, token,
                     over_http, heard)  # fmt: skip
    except BaseException:
        say(f"agent {name} stopped by an error")
        raise
    say(f"agent {name} stopped ({stopped_by[0] if stopped_by else 'done'})")


def _stopper(stop: asyncio.Event, stopped_by: list[str], signal_name: str) -> Callable[[], None]:
    def handler() -> None:
        stopped_by.append(signal_name)
        stop.set()

    return handler


class _Connected:
    """Says "connected" at the first heartbeat the server accepts."""

    def __init__(self, name: str, server: str, say: Callable[[str], None]) -> None:
        self.name = name
        self.server = server
        self.say = say
        self.connected = False

    def __call__(self, reply: dict[str, Any]) -> None:
        if self.connected or "error" in reply:
            return
        self.connected = True
        self.say(f"agent {self.name} connected to {self.server}: heartbeat accepted,"
                 " answering its tasks")  # fmt: skip


async def _serve(
    server: str,
    prefix: str,
    declared: AgentConfig,
    provider: Provider,
    interval_s: float,
    stop: asyncio.Event,
    concurrency: int,
    token: str | None,
    over_http: bool,
    heard: _Connected,
) -> None:
    if over_http:
        headers = {} if token is None else {"authorization": f"Bearer {token}"}
        try:
            async with httpx.AsyncClient(base_url=server, headers=headers, timeout=30) as client:
                await serve_agent_over_http(
                    client, declared, provider, interval_s=interval_s, stop=stop,
                    concurrency=concurrency, on_heartbeat=heard,
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
            interval_s=interval_s,
            stop=stop,
            concurrency=concurrency,
            on_heartbeat=heard,
        )
    finally:
        await provider.aclose()
        await nc.drain()
