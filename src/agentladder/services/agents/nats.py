"""Agents over NATS: heartbeats in, propose and evaluate tasks out, request-reply.

Subjects (``prefix`` defaults to ``agentladder``):

- ``<prefix>.agents.heartbeat``: an agent's heartbeat (its AgentConfig fields, JSON);
  the reply is ``{"agent_id", "status"}`` or ``{"error": {"code", "message"}}``.
- ``<prefix>.agents.<name>.propose`` and ``.evaluate``: the orchestrator asks a remote
  agent (a ``ProposeRequest`` or ``EvaluateRequest``, JSON); the agent replies with its
  ``Proposal`` or ``Evaluation``, or ``{"error": {"kind", "message"}}``.

On a NATS deployment, give each agent a NATS user that may publish only on the heartbeat
subject and subscribe only to its own task subjects: the server still refuses a
heartbeat that carries rank, XP or level, whoever sends it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any

import nats.errors
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from pydantic import BaseModel

from agentladder.domain.agents import AgentConfig
from agentladder.errors import AgentladderError, ProviderError
from agentladder.providers.base import (
    EvaluateRequest,
    Evaluation,
    Proposal,
    ProposeRequest,
    Provider,
)
from agentladder.services.agents.registry import Registry
from agentladder.services.agents.wire import (
    DEFAULT_CONCURRENCY,
    answer_task,
    decode_reply,
    parse_answer,
)

__all__ = [
    "NatsAgentProvider",
    "heartbeat_subject",
    "serve_agent",
    "serve_heartbeats",
    "task_subject",
]

log = logging.getLogger(__name__)


def heartbeat_subject(prefix: str) -> str:
    """Where agents send heartbeats."""
    return f"{prefix}.agents.heartbeat"


def task_subject(prefix: str, agent_id: str, task: str) -> str:
    """Where one agent receives ``propose`` or ``evaluate`` tasks."""
    return f"{prefix}.agents.{agent_id}.{task}"


def _error(code: str, message: str) -> bytes:
    return json.dumps({"error": {"code": code, "message": message}}).encode()


async def serve_heartbeats(nc: Client, registry: Registry, prefix: str) -> Subscription:
    """Answer heartbeats on the heartbeat subject through the registry."""

    async def handle(msg: Msg) -> None:
        try:
            payload = json.loads(msg.data)
            if not isinstance(payload, dict):
                raise ValueError("a heartbeat is a JSON object")
            view = await registry.heartbeat(payload)
            reply = json.dumps({"agent_id": view.agent_id, "status": view.status.value}).encode()
        except AgentladderError as error:
            reply = _error(type(error).__name__, str(error))
        except ValueError as error:
            reply = _error("InvalidInput", f"heartbeat: {error}")
        if msg.reply:
            await msg.respond(reply)

    return await nc.subscribe(heartbeat_subject(prefix), cb=handle)


class NatsAgentProvider:
    """Asks a remote agent process over NATS; implements ``Provider``."""

    def __init__(self, nc: Client, prefix: str, agent_id: str, *, timeout_s: float = 60.0) -> None:
        self._nc = nc
        self._prefix = prefix
        self._agent_id = agent_id
        self._timeout = timeout_s

    async def _ask(self, task: str, request: BaseModel) -> dict[str, Any]:
        subject = task_subject(self._prefix, self._agent_id, task)
        try:
            msg = await self._nc.request(
                subject, request.model_dump_json().encode(), timeout=self._timeout
            )
        except nats.errors.NoRespondersError as error:
            raise ProviderError("refused", f"agent {self._agent_id!r} is not listening") from error
        except nats.errors.TimeoutError as error:
            raise ProviderError("timeout", f"agent {self._agent_id!r}: no answer") from error
        except (nats.errors.Error, OSError) as error:
            raise ProviderError("http", f"agent {self._agent_id!r}: {error!r}") from error
        return decode_reply(msg.data, self._agent_id)

    async def propose(self, request: ProposeRequest) -> Proposal:
        """The remote agent's proposal."""
        return parse_answer(Proposal, await self._ask("propose", request), self._agent_id)

    async def evaluate(self, request: EvaluateRequest) -> Evaluation:
        """The remote agent's evaluation."""
        return parse_answer(Evaluation, await self._ask("evaluate", request), self._agent_id)

    async def aclose(self) -> None:
        """The connection belongs to the caller."""


async def serve_agent(
    nc: Client,
    prefix: str,
    agent: AgentConfig,
    provider: Provider,
    *,
    interval_s: float = 10.0,
    stop: asyncio.Event,
    on_heartbeat: Callable[[dict[str, Any]], None] | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
) -> None:
    """Be one agent: answer its tasks with ``provider`` and heartbeat until ``stop`` is set.

    Every task gets a reply: the answer, or ``{"error": {"kind", "message"}}`` for a
    ``ProviderError``, an invalid task, or any other failure of the provider (``refused``,
    naming it), so that a provider's bug costs the orchestrator no timeout. Up to
    ``concurrency`` tasks are answered at once (nats-py hands a subscription's messages
    over one at a time, so each is answered in a task of its own); more wait their turn.
    """
    gate = asyncio.Semaphore(concurrency)
    inflight: set[asyncio.Task[None]] = set()

    def answering(task: str) -> Callable[[Msg], Any]:
        async def reply(msg: Msg) -> None:
            try:
                await msg.respond(await answer_task(provider, agent.name, task, msg.data))
            except (nats.errors.Error, OSError) as error:  # the asker is gone or unreachable
                log.warning("answer to a %s task not delivered: %r", task, error)
            finally:
                gate.release()

        async def handle(msg: Msg) -> None:
            await gate.acquire()
            job = asyncio.ensure_future(reply(msg))
            inflight.add(job)
            job.add_done_callback(inflight.discard)

        return handle

    subscriptions = [
        await nc.subscribe(task_subject(prefix, agent.name, task), cb=answering(task))
        for task in ("propose", "evaluate")
    ]
    beat = agent.model_dump_json(exclude={"estimated_cost_per_round"}).encode()
    try:
        while not stop.is_set():
            try:
                msg = await nc.request(heartbeat_subject(prefix), beat, timeout=5.0)
                reply = json.loads(msg.data)
                if on_heartbeat is not None:
                    on_heartbeat(reply)
                if "error" in reply:
                    log.error("heartbeat refused: %s", reply["error"])
            except (nats.errors.Error, OSError, ValueError) as error:
                log.warning("heartbeat not delivered: %r", error)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), interval_s)
    finally:
        for subscription in subscriptions:
            await subscription.unsubscribe()
        for job in list(inflight):  # stopping: what is not answered yet never will be
            job.cancel()
        await asyncio.gather(*inflight, return_exceptions=True)
