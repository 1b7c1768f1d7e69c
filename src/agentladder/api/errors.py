"""Every error the API returns has one shape: ``{"error": {"code", "message", ...}}``.

This module is the one place where agentladder's exceptions become HTTP status codes:
400 too few agents, 401/403 authentication and roles, 404 not found, 409 conflicts
(the same contract with another payload), 413 bodies over the limit, 422 invalid input
naming the field (and a heartbeat reporting rank or XP), 503 store unavailable.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from agentladder.domain.registry import SelfPromotion
from agentladder.errors import (
    AgentladderError,
    Conflict,
    CorruptRecord,
    InvalidInput,
    NotFound,
    Refused,
    StoreUnavailable,
    TooFewAgents,
)

__all__ = ["ApiError", "error_response", "install_error_handlers"]

log = logging.getLogger(__name__)


class ApiError(Exception):
    """An HTTP error raised by the API layer itself (authentication, body size)."""

    def __init__(self, status: int, code: str, message: str, **extra: Any) -> None:
        self.status = status
        self.code = code
        self.message = message
        self.extra = extra
        super().__init__(message)


def _safe(value: Any) -> Any:
    """A JSON-safe echo of a refused value (NaN and infinities as strings, long cut)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, str | int | float | bool) or value is None:
        return value[:200] if isinstance(value, str) else value
    return repr(value)[:200]


def error_response(status: int, code: str, message: str, **extra: Any) -> JSONResponse:
    """The one error shape."""
    return JSONResponse({"error": {"code": code, "message": message, **extra}}, status_code=status)


def _for(error: AgentladderError) -> JSONResponse:
    if isinstance(error, TooFewAgents):
        return error_response(400, "too_few_agents", str(error), excluded=error.excluded,
                              qualified=error.qualified)  # fmt: skip
    if isinstance(error, SelfPromotion):
        return error_response(422, "server_owned_field", str(error), fields=error.fields)
    if isinstance(error, InvalidInput):
        return error_response(422, "invalid_input", str(error), field=error.field,
                              value=_safe(error.value))  # fmt: skip
    if isinstance(error, NotFound):
        return error_response(404, "not_found", str(error))
    if isinstance(error, Conflict):
        return error_response(409, "conflict", str(error))
    if isinstance(error, Refused):
        return error_response(403, "forbidden", str(error))
    if isinstance(error, StoreUnavailable):
        return error_response(503, "store_unavailable", str(error))
    if isinstance(error, CorruptRecord):
        log.error("corrupt record: %s", error)
        return error_response(500, "corrupt_record", str(error))
    log.exception("unexpected error", exc_info=error)
    return error_response(500, "internal", type(error).__name__)


def install_error_handlers(app: FastAPI) -> None:
    """Map every error to the one shape."""

    async def domain(_: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, AgentladderError)
        return _for(error)

    async def api(_: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, ApiError)
        return error_response(error.status, error.code, error.message, **error.extra)

    async def validation(_: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, RequestValidationError)
        first = error.errors()[0] if error.errors() else {}
        loc = [str(part) for part in first.get("loc", ()) if part != "body"]
        field = ".".join(loc) or "body"
        message = f"{field}: {first.get('msg', 'invalid')}"
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

    app.add_exception_handler(AgentladderError, domain)
    app.add_exception_handler(ApiError, api)
    app.add_exception_handler(RequestValidationError, validation)
    app.add_exception_handler(StarletteHTTPException, http)
    app.add_exception_handler(Exception, fallback)
