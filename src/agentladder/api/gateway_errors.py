"""Errors of the gateway's ``/v1`` routes in OpenAI's shape, which OpenAI's clients read:
``{"error": {"message", "type", "param", "code"}}``.

``install_error_handlers`` (``errors.py``) answers a request under ``/v1/`` through
``for_gateway``: a client over its budget, or whose request's hold does not fit what is
left, is 429 ``insufficient_quota`` (type and code, as OpenAI sends its own quota errors,
which OpenAI's clients and Inspect AI do not retry; with ``x-should-retry: false``, which
OpenAI's Python client obeys, ``Retry-After`` until the period resets and the budget's
headers), an unknown ``model`` is 404 ``model_not_found`` (param
``model``), bad input 400 ``invalid_value`` naming the field (or header) in
``param``, no agent qualifying 400 ``no_agent_qualifies`` (503 when every agent left out
is down or offline: that passes), every agent tried failing 503 ``agents_failed`` (with
``Retry-After``: the soonest one of them may be asked again, at least 1 s), every
agent asked refusing the request as invalid the last refusal's status (400, 413 or 422)
with its provider's ``type``, ``param`` and ``code`` (``rejected_by_agent`` when it sent
none); anything else keeps its status and code, reshaped.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi.responses import JSONResponse

from agentladder.errors import (
    AgentladderError,
    AgentsFailed,
    BudgetExceeded,
    InvalidInput,
    NoAgentQualifies,
    RequestRejected,
    UnknownModel,
)

__all__ = ["GATEWAY_PREFIX", "QUOTA", "for_gateway", "openai_error", "reshaped"]

GATEWAY_PREFIX = "/v1/"
QUOTA = "insufficient_quota"
"""The ``type`` and ``code`` of a spent budget's 429, as OpenAI's own quota errors."""
_PASSING = frozenset({"down", "offline"})
_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "invalid_request_error",
    409: "invalid_request_error",
    413: "invalid_request_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
}


def openai_error(
    status: int, message: str, code: str, param: str | None = None,
    headers: dict[str, str] | None = None, kind: str | None = None,
) -> JSONResponse:  # fmt: skip
    """One error in OpenAI's shape; ``type``: ``kind``, else from the status."""
    kind = kind or _TYPES.get(status, "server_error")
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return JSONResponse(body, status_code=status, headers=headers)


def for_gateway(error: AgentladderError) -> JSONResponse | None:
    """The gateway's own errors; None for the others (``reshaped`` takes them)."""
    if isinstance(error, BudgetExceeded):
        headers = {**error.headers, "x-should-retry": "false"}  # OpenAI's client obeys it
        return openai_error(429, str(error), QUOTA, None, headers, kind=QUOTA)
    if isinstance(error, UnknownModel):
        return openai_error(404, str(error), "model_not_found", "model")
    if isinstance(error, NoAgentQualifies):
        passing = bool(error.excluded) and all(e["reason"] in _PASSING for e in error.excluded)
        if passing:
            return openai_error(
                503, str(error), "no_agent_qualifies", "model", {"Retry-After": "5"}
            )
        return openai_error(400, str(error), "no_agent_qualifies", "model")
    if isinstance(error, AgentsFailed):
        retry = {} if error.retry_after_s is None else {"Retry-After": str(error.retry_after_s)}
        return openai_error(503, str(error), "agents_failed", headers=retry)
    if isinstance(error, RequestRejected):
        detail, status = error.last.detail, error.last.status
        kind, param, code = detail.get("type"), detail.get("param"), detail.get("code")
        return openai_error(
            status, str(error), code if isinstance(code, str) else "rejected_by_agent",
            param if isinstance(param, str) else None,
            kind=kind if isinstance(kind, str) else None,
        )  # fmt: skip
    if isinstance(error, InvalidInput):
        return openai_error(400, str(error), "invalid_value", error.field)
    return None


def reshaped(response: JSONResponse) -> JSONResponse:
    """An error of agentladder's shape (``{"error": {"code", "message", "field"?}}``) in
    OpenAI's, with the same status and headers."""
    found: Any = json.loads(bytes(response.body))
    inner = found.get("error", {}) if isinstance(found, dict) else {}
    status = response.status_code
    if status == 422:  # a field the gateway refuses: 400, as OpenAI's API answers
        status = 400
    out = openai_error(
        status, str(inner.get("message", "")), str(inner.get("code", "error")),
        inner.get("field"),
    )  # fmt: skip
    for name, value in response.headers.items():
        if name.lower() not in {"content-length", "content-type"}:
            out.headers[name] = value
    return out
