"""``/agents/tasks``: remote agents that reach the service over HTTP take and answer their
tasks (see ``services/agents/http.py``). Each call names the agent; an agent token may
act only for its own agent (else 403, logged and counted as ``impersonation``)."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Response
from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentladder.api.deps import CallerDep, CheckedJson, Role, ServicesDep
from agentladder.api.errors import ApiError, CallRefused
from agentladder.domain.agents import AgentName
from agentladder.errors import NotFound
from agentladder.providers.base import EvaluateRequest, ProposeRequest

__all__ = ["router"]

router = APIRouter(prefix="/agents/tasks", tags=["agents"])
AGENT_CALL = [Depends(Role("agent")), CheckedJson]
"""The caller's role first (a refusal whatever the body), then the body's numbers."""


class TaskOut(BaseModel):
    """One task for the agent: its id, its kind and the request to answer."""

    task_id: str
    kind: Literal["propose", "evaluate"]
    request: ProposeRequest | EvaluateRequest = Field(
        description="a ProposeRequest for kind propose, an EvaluateRequest for evaluate"
    )


class TaskError(BaseModel):
    """The agent could not answer (the kinds of ``ProviderError``)."""

    model_config = ConfigDict(extra="forbid")

    kind: str = Field(min_length=1, max_length=32)
    message: str = Field(default="", max_length=10_000)


class TaskAnswer(BaseModel):
    """The agent's answer to one task: its proposal or evaluation, or an error."""

    model_config = ConfigDict(extra="forbid")

    agent_id: AgentName
    task_id: str = Field(pattern=r"^[0-9a-f]{32}$")
    answer: dict[str, Any] | None = None
    error: TaskError | None = None

    @model_validator(mode="after")
    def _one_of(self) -> TaskAnswer:
        if (self.answer is None) == (self.error is None):
            raise ValueError("give exactly one of answer and error")
        return self


def _as_agent(caller: CallerDep, agent_id: str) -> None:
    if caller.role == "agent" and caller.agent_id != agent_id:
        raise CallRefused(
            403, "forbidden", f"agent {caller.agent_id!r} may not act as {agent_id!r}",
            reason="impersonation",
        )  # fmt: skip


def _takes_tasks(services: ServicesDep, agent_id: str) -> None:
    if agent_id not in services.tasks_for:
        raise NotFound("agent taking tasks over HTTP", agent_id)


@router.get(
    "/next", response_model=TaskOut, dependencies=[Depends(Role("agent"))],
    responses={204: {"description": "no task within wait_s"},
               429: {"description": "the agent holds api.max_polls_per_agent polls already"}},
)  # fmt: skip
async def next_task(
    services: ServicesDep,
    caller: CallerDep,
    agent_id: AgentName,
    wait_s: Annotated[float, Query(ge=0, le=30)] = 20.0,
) -> Response:
    """The agent's next task, waiting up to ``wait_s`` for one (204 if none came).

    An agent holds at most ``api.max_polls_per_agent`` polls at once (429 past it). A
    poll whose client went away is not noticed before ``wait_s`` ends (and a stopping
    server waits for it): agents poll for 5 s (``services.agents.http.POLL_S``)."""
    _as_agent(caller, agent_id)
    _takes_tasks(services, agent_id)
    cap = services.settings.api.max_polls_per_agent
    if services.tasks.polls[agent_id] >= cap:
        raise ApiError(
            429, "too_many_polls",
            f"agent {agent_id!r} already holds {cap} polls, its most (api.max_polls_per_agent)",
        )  # fmt: skip
    task = await services.tasks.take(agent_id, wait_s)
    if task is None:
        return Response(status_code=204)
    body = (
        f'{{"task_id":"{task.task_id}","kind":"{task.kind}","request":'.encode()
        + task.request
        + b"}"
    )
    return Response(body, media_type="application/json")


@router.post("/answers", status_code=204, dependencies=AGENT_CALL)
async def answer(services: ServicesDep, caller: CallerDep, body: TaskAnswer) -> Response:
    """The agent's answer to a task it took; 404 if no such task is awaited from it."""
    _as_agent(caller, body.agent_id)
    if body.error is not None:
        raw = json.dumps({"error": body.error.model_dump()}).encode()
    else:
        raw = json.dumps(body.answer).encode()
    if not services.tasks.answer(body.agent_id, body.task_id, raw):
        raise ApiError(404, "not_found", f"no task {body.task_id} awaits an answer from it")
    return Response(status_code=204)
