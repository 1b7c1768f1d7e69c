"""Every error the API returns has one shape: ``{"error": {"code", "message", ...}}``
(the gateway's ``/v1`` routes: OpenAI's, ``gateway_errors.py``).

This module is the one place where agentladder's exceptions become HTTP status codes:
400 too few agents, 401/403 authentication and roles, 404 not found, 409 conflicts
(the same contract with another payload), 413 bodies over the limit, 422 invalid input
naming the field (and a heartbeat reporting rank or XP), 503 store unavailable.

Every refusal of a caller (no token, an unknown token, a role that may not, a heartbeat
reporting rank or XP, an agent heartbeating as another) is logged as a warning naming
the route, the caller's role and agent; the API's own refusals are counted per app in
``app.state.refusals`` (the registry counts its own), and ``/metrics`` serves both.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from agentladder.api.gateway_errors import GATEWAY_PREFIX, for_gateway, reshaped
from agentladder.domain.registry import DeclarationMismatch, SelfPromotion
from agentladder.errors import (
    AgentladderError,
    BudgetExceeded,
    Busy,
    Conflict,
    CorruptRecord,
    InvalidInput,
    NotFound,
    Refused,
    SkillQueueFull,
    StoreUnavailable,
    TooFewAgents,
    UnknownAgent,
    shown_value,
)

__all__ = [
    "ApiError",
    "CallRefused",
    "error_response",
    "install_error_handlers",
    "log_refusal",
    "refusals_of",
]

log = logging.getLogger(__name__)


class ApiError(Exception):
    """An HTTP error raised by the API layer itself (authentication, body size)."""

    def __init__(self, status: int, code: str, message: str, **extra: Any) -> None:
        self.status = status
        self.code = code
        self.message = message
        self.extra = extra
        super().__init__(message)


class CallRefused(ApiError):
    """A caller refused before the route runs: 401 (``unauthenticated``, ``invalid_token``)
    or 403 (``forbidden_role``); logged and counted under ``reason``."""

    def __init__(self, status: int, code: str, message: str, *, reason: str) -> None:
        super().__init__(status, code, message)
        self.reason = reason


BEARER = 'Bearer realm="agentladder"'
"""The challenge of every 401: a bearer token (``api.tokens``)."""
INVALID_TOKEN = BEARER + ', error="invalid_token"'

_SURROGATES = re.compile("[\ud800-\udfff]")
_MAX_ECHO = 200
_MAX_MESSAGE = 1000


def _safe(value: Any) -> Any:
    """A JSON-safe echo of a refused value (NaN and infinities as strings, long cut)."""
    if isinstance(value, float):  # a number stays one; a non-finite one cannot encode
        return value if math.isfinite(value) else str(value)
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return repr(value)[:_MAX_ECHO]
    if isinstance(value, str | int | float | bool) or value is None:
        return value[:_MAX_ECHO] if isinstance(value, str) else value
    return repr(value)[:_MAX_ECHO]


def _clean(value: Any) -> Any:
    """``value`` with lone surrogates replaced and non-finite floats as strings, so the
    error body always encodes (an echo of hostile input must not turn a 4xx into a 500)."""
    if isinstance(value, str):
        return _SURROGATES.sub("\ufffd", value)
    if isinstance(value, float):  # a number stays one; a non-finite one cannot encode
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return {_clean(str(k)): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if isinstance(value, int | bool) or value is None:
        return value
    return _clean(str(value))


def error_response(
    status: int, code: str, message: str, *, headers: dict[str, str] | None = None, **extra: Any
) -> JSONResponse:
    """The one error shape; a 401 says how to authenticate (``WWW-Authenticate: Bearer``,
    RFC 6750, with ``error="invalid_token"`` when the token given is unknown)."""
    body = _clean({"error": {"code": code, "message": message[:_MAX_MESSAGE], **extra}})
    if status == 401 and not (headers and "WWW-Authenticate" in headers):
        headers = {**(headers or {}), "WWW-Authenticate": BEARER}
    return JSONResponse(body, status_code=status, headers=headers)


def refusals_of(app: Any) -> Counter[str]:
    """The refusals the API of ``app`` counted, by reason (``/metrics`` serves them)."""
    found: Counter[str] = app.state.refusals
    return found


def _route(request: Request) -> str:
    route = request.scope.get("route")
    return f"{request.method} {getattr(route, 'path', request.url.path)}"


def _reason(request: Request, error: Refused) -> str:
    if isinstance(error, SelfPromotion):
        return "self_promotion"
    if isinstance(error, DeclarationMismatch):
        return "declaration_mismatch"
    if getattr(request.scope.get("route"), "path", None) == "/agents/heartbeat":
        return "impersonation"  # the registry's one other refusal
    return "refused"


def log_refusal(request: Request, reason: str, message: str) -> None:
    """Log a refused caller: the route, the reason, its role and agent."""
    caller = getattr(request.state, "caller", None)
    role = getattr(caller, "role", None)
    agent = getattr(caller, "agent_id", None)
    log.warning(
        "refused %s (%s): role=%s agent=%s: %s",
        _route(request), reason, role, agent, _clean(message)[:_MAX_ECHO],
    )  # fmt: skip


def _for(error: AgentladderError) -> JSONResponse:
    if isinstance(error, TooFewAgents):
        return error_response(400, "too_few_agents", str(error), excluded=error.excluded,
                              qualified=error.qualified)  # fmt: skip
    if isinstance(error, SelfPromotion):
        return error_response(422, "server_owned_field", str(error), fields=error.fields)
    if isinstance(error, UnknownAgent):
        return error_response(422, "invalid_input", str(error), field=error.field,
                              value=_safe(error.value), suggestions=error.suggestions)  # fmt: skip
    if isinstance(error, InvalidInput):
        return error_response(422, "invalid_input", str(error), field=error.field,
                              value=_safe(error.value))  # fmt: skip
    if isinstance(error, NotFound):
        if error.suggestions:
            return error_response(404, "not_found", str(error), suggestions=error.suggestions)
        return error_response(404, "not_found", str(error))
    if isinstance(error, Conflict):
        return error_response(409, "conflict", str(error))
    if isinstance(error, DeclarationMismatch):
        return error_response(409, "declaration_mismatch", str(error), fields=error.fields)
    if isinstance(error, Refused):
        return error_response(403, "forbidden", str(error))
    if isinstance(error, BudgetExceeded):
        return error_response(429, "budget_exceeded", str(error), headers=error.headers)
    if isinstance(error, Busy):
        retry = str(max(1, math.ceil(error.retry_after_s)))
        code = "skill_queue_full" if isinstance(error, SkillQueueFull) else "busy"
        return error_response(503, code, str(error), headers={"Retry-After": retry})
    if isinstance(error, StoreUnavailable):
        return error_response(503, "store_unavailable", str(error))
    if isinstance(error, CorruptRecord):
        log.error("corrupt record: %s", error)
        return error_response(500, "corrupt_record", str(error))
    log.exception("unexpected error", exc_info=error)
    return error_response(500, "internal", type(error).__name__)


Handler = Callable[[Request, Exception], Awaitable[JSONResponse]]


def _gateway(request: Request) -> bool:
    return request.url.path.startswith(GATEWAY_PREFIX)


def _budgeted(request: Request, response: JSONResponse) -> JSONResponse:
    """A gateway error with the caller's budget headers, once its budget was read (those
    the error carries itself, a refused reservation's figures, are kept), and how the
    request was routed, as far as it was (its task type, classification, strategy)."""
    for name, value in getattr(request.state, "budget_headers", {}).items():
        response.headers.setdefault(name, value)
    for name, value in getattr(request.state, "route_headers", {}).items():
        response.headers.setdefault(name, value)
    return response


def install_error_handlers(app: FastAPI) -> None:
    """Map every error to the one shape."""

    app.state.refusals = Counter()

    async def domain(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, AgentladderError)
        if isinstance(error, Refused):  # the registry counts its own refusals
            log_refusal(request, _reason(request, error), str(error))
        if _gateway(request):
            return _budgeted(request, for_gateway(error) or reshaped(_for(error)))
        return _for(error)

    async def api(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, ApiError)
        if isinstance(error, CallRefused):
            refusals_of(request.app)[error.reason] += 1
            log_refusal(request, error.reason, error.message)
            if error.reason == "invalid_token":
                challenge = {"WWW-Authenticate": INVALID_TOKEN}
                return error_response(error.status, error.code, error.message, headers=challenge)
        return error_response(error.status, error.code, error.message, **error.extra)

    async def validation(_: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, RequestValidationError)
        first = error.errors()[0] if error.errors() else {}
        if first.get("type") == "json_invalid":  # not JSON at all: 400, as documented
            where = first.get("loc", ("body", "?"))[-1]
            reason = first.get("ctx", {}).get("error", "invalid")
            return error_response(
                400, "bad_request", f"the body is not JSON: {reason} at character {where}"
            )
        loc = [str(part) for part in first.get("loc", ()) if part != "body"]
        raised = first.get("ctx", {}).get("error")
        if isinstance(raised, InvalidInput):  # a model's own check names its field
            field = ".".join([*loc, raised.field])[:_MAX_ECHO]
            message = f"{field}: {raised.reason} ({shown_value(raised.value)})"
            return error_response(422, "invalid_input", message, field=field,
                                  value=_safe(raised.value))  # fmt: skip
        field = (".".join(loc) or "body")[:_MAX_ECHO]  # a 10,000-character key stays cut
        message = f"{field}: {str(first.get('msg', 'invalid')).removeprefix('Value error, ')}"
        return error_response(422, "invalid_input", message, field=field,
                              value=_safe(first.get("input")))  # fmt: skip

    async def http(_: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, StarletteHTTPException)
        codes = {400: "bad_request", 404: "not_found", 405: "method_not_allowed"}
        code = codes.get(error.status_code, "http_error")
        return error_response(error.status_code, code, str(error.detail))

    async def fallback(_: Request, error: Exception) -> JSONResponse:
        log.exception("unhandled error", exc_info=error)
        return error_response(500, "internal", type(error).__name__)

    def shaped(handler: Handler) -> Handler:  # the gateway's routes: OpenAI's shape
        async def answer(request: Request, error: Exception) -> JSONResponse:
            response = await handler(request, error)
            return _budgeted(request, reshaped(response)) if _gateway(request) else response

        return answer

    app.add_exception_handler(AgentladderError, domain)
    app.add_exception_handler(ApiError, shaped(api))
    app.add_exception_handler(RequestValidationError, shaped(validation))
    app.add_exception_handler(StarletteHTTPException, shaped(http))
    app.add_exception_handler(Exception, shaped(fallback))
