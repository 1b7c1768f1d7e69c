"""Agents over HTTP: for a service without NATS (the embedded SQLite store), an agent
process (``agentladder agent --server http://...``) heartbeats with
``POST /agents/heartbeat``, takes its tasks with a long poll of ``GET /agents/tasks/next``
and answers each with ``POST /agents/tasks/answers``, all under its own agent token.

The server keeps the tasks in memory (``TaskBoard``): a task lives while the orchestrator
waits for its answer, at most the call's timeout; a task whose asker gave up leaves the
queue at once, polled or not, and a late answer is refused (404). Tasks belong to the
instance that asked: several instances on one store need NATS.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
from pydantic import BaseModel

from agentladder.domain.agents import AgentConfig
from agentladder.domain.redact import shown_url
from agentladder.errors import ProviderError
from agentladder.providers.base import (
    EvaluateRequest,
    Evaluation,
    Proposal,
    ProposeRequest,
    Provider,
)
from agentladder.redaction import scrub
from agentladder.services.agents.wire import (
    DEFAULT_CONCURRENCY,
    TaskKind,
    answer_task,
    decode_reply,
    parse_answer,
)
from agentladder.unreached import not_connected

__all__ = ["HttpAgentProvider", "Task", "TaskBoard", "serve_agent_over_http"]

log = logging.getLogger(__name__)
POLL_S = 5.0
"""How long an agent's poll waits for a task before it asks again."""


@dataclass(frozen=True, slots=True)
class Task:
    """One propose or evaluate task for one agent."""

    task_id: str
    agent_id: str
    kind: TaskKind
    request: bytes


class TaskBoard:
    """The tasks waiting for agents that reach this instance over HTTP.

    A task is queued for its agent while its asker waits, and leaves the queue when the
    asker gives up (timed out or cancelled), polled or not; ``polls`` counts each agent's
    polls waiting now (the API caps them, ``api.max_polls_per_agent``)."""

    def __init__(self) -> None:
        self._queues: dict[str, dict[str, Task]] = {}  # agent -> task id -> task, in order
        self._arrived: dict[str, asyncio.Condition] = {}
        self._waiting: dict[str, tuple[Task, asyncio.Future[bytes]]] = {}
        self.polls: Counter[str] = Counter()

    def _condition(self, agent_id: str) -> asyncio.Condition:
        return self._arrived.setdefault(agent_id, asyncio.Condition())

    @property
    def queued(self) -> int:
        """Tasks queued for their agents now (not yet taken)."""
        return sum(len(queue) for queue in self._queues.values())

    async def ask(self, agent_id: str, kind: TaskKind, request: bytes, timeout_s: float) -> bytes:
        """Queue a task and wait for its answer; ``TimeoutError`` after ``timeout_s``."""
        task = Task(uuid.uuid4().hex, agent_id, kind, request)
        answer: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._waiting[task.task_id] = (task, answer)
        self._queues.setdefault(agent_id, {})[task.task_id] = task
        condition = self._condition(agent_id)
        async with condition:
            condition.notify_all()
        try:
            async with asyncio.timeout(timeout_s):
                return await answer
        finally:
            self._waiting.pop(task.task_id, None)
            queue = self._queues.get(agent_id)
            if queue is not None:
                queue.pop(task.task_id, None)  # the asker gave up: nobody may take it
                if not queue:
                    del self._queues[agent_id]

    def _next(self, agent_id: str) -> Task | None:
        queue = self._queues.get(agent_id)
        if not queue:
            return None
        task = queue.pop(next(iter(queue)))
        if not queue:
            del self._queues[agent_id]
        return task

    async def take(self, agent_id: str, wait_s: float) -> Task | None:
        """The agent's next task still awaited, waiting up to ``wait_s``; None if none."""
        condition = self._condition(agent_id)
        self.polls[agent_id] += 1
        try:
            async with condition:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(wait_s):
                        await condition.wait_for(lambda: bool(self._queues.get(agent_id)))
                return self._next(agent_id)
        finally:
            self.polls[agent_id] -= 1
            if not self.polls[agent_id]:
                del self.polls[agent_id]

    def answer(self, agent_id: str, task_id: str, data: bytes) -> bool:
        """Hand the agent's answer to the waiting orchestrator; False if no such task is
        awaited from this agent (unknown, timed out or answered)."""
        found = self._waiting.get(task_id)
        if found is None or found[0].agent_id != agent_id or found[1].done():
            return False
        found[1].set_result(data)
        return True


class HttpAgentProvider:
    """Asks a remote agent that polls this instance over HTTP; implements ``Provider``."""

    def __init__(self, board: TaskBoard, agent_id: str, *, timeout_s: float = 60.0) -> None:
        self._board = board
        self._agent_id = agent_id
        self._timeout = timeout_s

    async def _ask(self, kind: TaskKind, request: BaseModel) -> bytes:
        try:
            return await self._board.ask(
                self._agent_id, kind, request.model_dump_json().encode(), self._timeout
            )
        except TimeoutError as error:
            raise ProviderError("timeout", f"agent {self._agent_id!r}: no answer") from error

    async def propose(self, request: ProposeRequest) -> Proposal:
        """The remote agent's proposal."""
        reply = decode_reply(await self._ask("propose", request), self._agent_id)
        return parse_answer(Proposal, reply, self._agent_id)

    async def evaluate(self, request: EvaluateRequest) -> Evaluation:
        """The remote agent's evaluation."""
        reply = decode_reply(await self._ask("evaluate", request), self._agent_id)
        return parse_answer(Evaluation, reply, self._agent_id)

    async def aclose(self) -> None:
        """Nothing of its own to close."""


async def serve_agent_over_http(
    client: httpx.AsyncClient,
    agent: AgentConfig,
    provider: Provider,
    *,
    interval_s: float = 10.0,
    stop: asyncio.Event,
    concurrency: int = DEFAULT_CONCURRENCY,
    on_heartbeat: Callable[[dict[str, Any]], None] | None = None,
) -> None:
    """Be one agent through the API at ``client``'s base URL: heartbeat every interval and
    answer the tasks polled, until ``stop`` is set; ``concurrency`` pollers, each answering
    the task it took, so one hanging model call does not stop the rest. ``on_heartbeat``
    is called with the answer of each accepted heartbeat."""
    beat = agent.model_dump(mode="json", exclude={"estimated_cost_per_round"})

    async def heartbeats() -> None:
        while not stop.is_set():
            try:
                answer = await client.post("/agents/heartbeat", json=beat)
                if answer.status_code != 200:
                    log.error("heartbeat refused (%d): %s", answer.status_code, answer.text)
                elif on_heartbeat is not None:
                    on_heartbeat(answer.json())
            except (httpx.HTTPError, ValueError) as error:
                log.warning("heartbeat not delivered: %s", _reason(error))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), interval_s)

    async def tasks() -> None:
        while not stop.is_set():
            try:
                polled = await client.get(
                    "/agents/tasks/next",
                    params={"agent_id": agent.name, "wait_s": POLL_S},
                    timeout=POLL_S + 10,
                )
                if polled.status_code == 204:
                    continue
                polled.raise_for_status()
                task = polled.json()
                data = await answer_task(
                    provider, agent.name, str(task["kind"]), _request_bytes(task["request"])
                )
                posted = await client.post(
                    "/agents/tasks/answers",
                    content=_answer_body(agent.name, str(task["task_id"]), data),
                    headers={"content-type": "application/json"},
                )
                if posted.status_code != 204:
                    log.warning("answer refused (%d): %s", posted.status_code, posted.text)
            except (httpx.HTTPError, ValueError, KeyError, TypeError) as error:
                log.warning("task poll failed, retrying: %s", _reason(error))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), 1.0)

    workers = [asyncio.ensure_future(heartbeats())]
    workers += [asyncio.ensure_future(tasks()) for _ in range(concurrency)]
    try:
        await stop.wait()
    finally:
        for worker in workers:
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)


def _reason(error: Exception) -> str:
    """What a failed exchange with the server says, redacted: an HTTP status error names
    the request's URL, shown without user, password or query (``domain/redact.py``)."""
    if isinstance(error, httpx.HTTPStatusError):
        return f"{error.response.status_code} from {shown_url(str(error.request.url))}"
    if isinstance(error, httpx.ConnectError):
        told = not_connected(error)
        if told is not None:
            return scrub(told)
    return scrub(f"{type(error).__name__}: {error}")


def _request_bytes(request: object) -> bytes:
    return json.dumps(request).encode()


def _answer_body(agent_id: str, task_id: str, data: bytes) -> bytes:
    """``{"agent_id", "task_id", "answer" | "error"}`` around the agent's answer bytes."""
    answer = json.loads(data)
    key = "error" if isinstance(answer, dict) and "error" in answer else "answer"
    value = answer["error"] if key == "error" else answer
    return json.dumps({"agent_id": agent_id, "task_id": task_id, key: value}).encode()
