"""The OpenAI-compatible gateway: ``POST /v1/chat/completions``, ``POST /v1/responses``
(OpenAI's Responses API, bridged to a chat completion: ``responses``) and
``GET /v1/models``, for bearer tokens of the ``client`` role (docs/gateway.md).

The body is the caller's, passed on unchanged but for ``model`` (the chosen agent's model
name); the answer comes back unchanged, with ``x-agentladder-agent`` (who answered),
``x-agentladder-contract`` (this request's contract id; also ``x-request-id``, which
clients such as Inspect AI record: services/gateway/request_ids.py, and the caller's own
id of the request is kept with its record), ``x-agentladder-check``
(whether a check of this answer will run: ``yes`` or ``no``, services/gateway/checks.py),
how it was routed (``x-agentladder-task-type``, ``x-agentladder-strategy``, how a request
without a task type was classified, cheapest_above's floor: services/gateway/said.py; also
on an error that came after the choice), and for a client token with a budget the
``x-agentladder-budget-*`` headers
(``services/gateway/budgets.py``: as the request's reservation found them); over budget,
or when the request's hold does not fit what is left, 429 ``insufficient_quota`` before
anything is forwarded. Errors are in OpenAI's shape
(``api/gateway_errors.py``). The routes are left out of agentladder's OpenAPI document:
their bodies are OpenAI's chat-completions API, passed through, which OpenAI documents.
"""

from __future__ import annotations

import json
import time
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from agentladder.api.auth import Caller
from agentladder.api.deps import Role, ServicesDep, caller_of_request, check_json, requires
from agentladder.api.errors import ApiError
from agentladder.api.gateway_errors import openai_error
from agentladder.domain.text import reason_invisible
from agentladder.errors import InvalidInput
from agentladder.services.container import Services
from agentladder.services.gateway.request_ids import ANSWER_ID_HEADER
from agentladder.services.gateway.responses_bridge import BRIDGING, Bridging
from agentladder.services.gateway.service import Served

__all__ = ["AGENT_HEADER", "CHECK_HEADER", "CONTRACT_HEADER", "router"]

CLIENT_ROLES = ("client",)
"""Who may call the gateway (an admin too)."""
router = APIRouter(
    tags=["gateway"], dependencies=[Depends(Role(*CLIENT_ROLES))], include_in_schema=False
)
"""Not in agentladder's OpenAPI document: the bodies are OpenAI's API, passed through."""

AGENT_HEADER = "x-agentladder-agent"
CONTRACT_HEADER = "x-agentladder-contract"
CHECK_HEADER = "x-agentladder-check"
_STARTED = int(time.time())
ClientDep = Annotated[Caller, Depends(Role(*CLIENT_ROLES))]


def caller_name(caller: Caller) -> str:
    """Who a client is for feedback: its token's name (every client token has its own,
    config.py), else its role (``admin``: an admin token without a name, or a loopback
    caller when no token is configured)."""
    if caller.token is not None and caller.token.name is not None:
        return caller.token.name
    return caller.role or "client"


def _headers(served: Served) -> dict[str, str]:
    return {
        AGENT_HEADER: served.agent_id,
        CONTRACT_HEADER: served.contract_id,
        ANSWER_ID_HEADER: served.contract_id,
        CHECK_HEADER: "yes" if served.check else "no",
    }


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        raise ApiError(400, "bad_request", "the body is not JSON") from None
    if not isinstance(body, dict):
        raise InvalidInput("body", type(body).__name__, "must be a JSON object")
    check_json(body)
    return body


@requires(*CLIENT_ROLES)
async def chat_completions(request: Request) -> Response:
    """A chat completion from the agent ``model`` names (an agent id, a route form such as
    ``route:<task_type>`` or ``route:<task_type>:cheapest_above@0.95``, ``route``, or an
    alias of ``gateway.models``), streamed as
    server-sent events with ``stream: true``. 404 ``model_not_found``; 400 or 503
    ``no_agent_qualifies``; 503 ``agents_failed`` naming every agent tried and why; 429
    ``insufficient_quota`` when the caller's budget is spent or the request's hold does not
    fit what is left.

    A plain Starlette route (the router's ``client`` role checked here): FastAPI's
    dependency resolution per request was a measurable part of the gateway's own time
    (docs/benchmarks.md, "The gateway"), and this route needs none of it."""
    return await _serve(request, "POST /v1/chat/completions", None)


async def _serve(request: Request, what: str, responses: Bridging | None) -> Response:
    """A chat completion through the gateway (``chat_completions``); with ``responses``,
    the body is a Responses API request, bridged to a chat body and its answer back
    (``services/gateway/responses_*.py``), the same path between."""
    received = time.perf_counter()
    caller = caller_of_request(request).require(*CLIENT_ROLES, what=what)
    services: Services = request.app.state.services
    gateway = services.gateway
    budget = gateway.budgets.check(caller.token)
    spent = {} if budget is None else budget.headers()
    request.state.budget_headers = spent  # on an error's answer too (api/errors.py)
    told: dict[str, str] = {}
    request.state.route_headers = told  # filled as the choice is made; on an error's too
    body = await _body(request)
    asked = body if responses is None else responses.chat_body(body)
    served = await gateway.complete(asked, request.headers, caller_name(caller), caller.token,
                                    told)  # fmt: skip
    added = time.perf_counter() - received - served.provider_s
    task_type = gateway.counted_task_type(served.choice.task_type)
    gateway.traffic.answered(
        served.agent_id, task_type, added, len(served.failures), served.choice.classified
    )
    if served.stream is not None:
        headers = {**_headers(served), **told, **spent, **served.budget,
                   "cache-control": "no-cache"}  # fmt: skip
        stream = served.stream if responses is None else responses.stream(body, served.stream)
        return StreamingResponse(stream, media_type="text/event-stream", headers=headers)
    headers = {**_headers(served), **told, **spent, **served.budget}
    answer = served.body if responses is None else responses.answer(body, served.body)
    return Response(answer, media_type="application/json", headers=headers)


router.add_route(
    "/v1/chat/completions", chat_completions, methods=["POST"], include_in_schema=False
)


@requires(*CLIENT_ROLES)
async def responses(request: Request) -> Response:
    """OpenAI's Responses API (``POST /v1/responses``) bridged to the agent's chat
    completions: the request translated to a chat body, which takes the chat route's whole
    path (routing, fallbacks, budgets, checks, feedback, the same headers), the answer
    translated back to a Response object, or its stream to the Responses API's events
    (docs/gateway.md, "The Responses API"). ``previous_response_id`` and tool types other
    than ``function`` are refused (400 naming the field)."""
    return await _serve(request, "POST /v1/responses", BRIDGING)


router.add_route("/v1/responses", responses, methods=["POST"], include_in_schema=False)


@router.get("/v1/models", response_model=None)
async def models(services: ServicesDep) -> JSONResponse:
    """What ``model`` may name: the agents the gateway can ask, the aliases, and
    ``route:<task_type>`` for the aliases' task types (any task type may be routed)."""
    data = [
        {"id": name, "object": "model", "created": _STARTED, "owned_by": "agentladder"}
        for name in services.gateway.models()
    ]
    return JSONResponse({"object": "list", "data": data})


def _check_contract(contract: object) -> None:
    """A feedback's ``contract_id`` with an invisible or confusable character is refused
    naming it (``domain/text.py``), not looked up: a look-alike of a real contract is
    never one, and the caller learns why."""
    if isinstance(contract, str):
        reason = reason_invisible(contract)
        if reason is not None:
            raise InvalidInput("contract_id", contract, reason)


@router.post("/v1/feedback", response_model=None)
async def feedback(request: Request, services: ServicesDep, caller: ClientDep) -> Response:
    """The caller's feedback on an answer it was given (``{"contract_id", "score" (0-10) |
    "thumbs": "up"|"down", "comment"}``): skill evidence by ``feedback:<token name>`` about
    the agent that answered, never XP, a level or a checking rate
    (services/gateway/feedback.py). 404 for a contract unknown (or
    past ``gateway.feedback_days``), 403 for another client's, 409 for another score of
    the same contract, 422 naming a bad field."""
    body = await _body(request)
    feedback = services.gateway.feedback
    assert feedback is not None
    try:
        _check_contract(body.get("contract_id"))
        given = await feedback.give(body, caller_name(caller), admin=caller.role == "admin")
    except InvalidInput as error:  # 422 (the chat route's 400 is OpenAI's own choice)
        return openai_error(422, str(error), "invalid_value", error.field)
    return JSONResponse(
        {
            "contract_id": given.record.contract_id,
            "agent_id": given.record.agent_id,
            "task_type": given.task_type,
            "judge": given.judge,
            "score": given.score,
            "comment": given.comment,
            "xp_awarded": 0,
            "counts_as": "skill evidence",
            "duplicate": given.duplicate,
        }
    )
