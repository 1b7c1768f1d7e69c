"""``RequestGuard``: what a request must be before the routes see it, as an ASGI middleware.

- one ``Authorization`` header at most (two: 400, since a proxy may read them the other
  way round);
- a write (POST, PUT, PATCH, DELETE) is authenticated before its body is read: without a
  known token (or, with no tokens configured, from a loopback client) it is refused 401
  at once, whatever the path, and its body never buffered;
- a body of at most ``api.max_body_bytes`` (413: a declared Content-Length over it at
  once, a chunked one as soon as it passes it), buffered and handed on whole; under
  ``/v1/`` (the gateway: a chat's whole context, images inlined) at most
  ``gateway.max_body_bytes`` instead;
- it arrives within ``api.body_timeout_s`` of its headers (408 ``request_timeout``);
- the bodies being buffered by all requests together hold at most
  ``api.max_buffered_bytes`` (503 ``busy``, with ``Retry-After``, for the one past it);

each refusal followed by the close of the connection;
- a JSON body of a write names each key of an object once (400: a proxy or another
  parser may keep the first where this one keeps the last);
- a write's body, when it has one, is JSON (``Content-Type: application/json`` or
  ``+json``): any other type, or none, is 415 ``unsupported_media_type``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentladder.api.auth import CALLER_KEY, TokenBook, caller_of
from agentladder.api.errors import BEARER, CallRefused, log_refusal, refusals_of

__all__ = ["RequestGuard", "duplicate_key"]

_WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
GATEWAY_PREFIX = "/v1/"
"""The gateway's routes, whose bodies are bounded by ``gateway.max_body_bytes``."""


class _Duplicate(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Duplicate(key)
            seen.add(key)
    return found


def duplicate_key(body: bytes) -> str | None:
    """A key some object of the JSON ``body`` holds twice, if any (None as well for a
    body that is not JSON: the route refuses that itself)."""
    try:
        json.loads(body, object_pairs_hook=_pairs)
    except _Duplicate as found:
        return found.key
    except (ValueError, RecursionError):
        return None
    return None


def _is_json(headers: dict[bytes, bytes]) -> bool:
    kind = headers.get(b"content-type", b"").partition(b";")[0].strip().lower()
    main, _, sub = kind.partition(b"/")
    return main == b"application" and (sub == b"json" or sub.endswith(b"+json"))


async def refuse(send: Send, status: int, code: str, message: str) -> None:
    """An error in the one shape, and the connection closed after it."""
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode()), (b"connection", b"close")]  # fmt: skip
    if status == 503:
        headers.append((b"retry-after", b"1"))
    if status == 401:
        headers.append((b"www-authenticate", BEARER.encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class _Refusal(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        self.status = status
        self.code = code
        self.message = message


class RequestGuard:
    """Refuse what no route may see (the module says what), before the routes run."""

    def __init__(
        self, app: ASGIApp, max_body_bytes: int, body_timeout_s: float, max_buffered_bytes: int,
        gateway_max_body_bytes: int | None = None,
    ) -> None:  # fmt: skip
        self.app = app
        self.limit = max_body_bytes
        self.gateway_limit = gateway_max_body_bytes or max_body_bytes
        self.timeout_s = body_timeout_s
        self.budget = max_buffered_bytes
        self.buffered = 0
        """Bytes of bodies being buffered now, by all requests together."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw: list[tuple[bytes, bytes]] = scope.get("headers") or []
        if sum(1 for name, _ in raw if name == b"authorization") > 1:
            await refuse(send, 400, "bad_request", "give one Authorization header, not several")
            return
        if scope["method"] in _WRITES and not _authenticated(scope):
            await refuse(send, 401, "unauthorized", "a bearer token is required")
            return
        headers = dict(raw)
        limit = self.gateway_limit if scope["path"].startswith(GATEWAY_PREFIX) else self.limit
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await _too_large(send, limit)
            return
        try:
            message = await self._body(receive, limit)
        except _Refusal as refused:
            await refuse(send, refused.status, refused.code, refused.message)
            return
        if message["type"] == "http.request" and scope["method"] in _WRITES and message["body"]:
            if not _is_json(headers):
                kind = headers.get(b"content-type", b"").decode("latin-1")[:100] or "none"
                why = f"the body must be JSON (Content-Type: application/json), not {kind}"
                await refuse(send, 415, "unsupported_media_type", why)
                return
            twice = duplicate_key(message["body"])
            if twice is not None:
                shown = json.dumps(twice[:64])
                await refuse(send, 400, "bad_request", f"the body has the key {shown} twice")
                return
        body: Message | None = message

        async def replay() -> Message:
            nonlocal body
            if body is None:
                return await receive()  # after the body: waits for the disconnect
            message, body = body, None
            return message

        await self.app(scope, replay, send)

    async def _body(self, receive: Receive, limit: int) -> Message:
        """The whole body as one message (or the disconnect), within the limits."""
        chunks: list[bytes] = []
        seen = 0
        try:
            async with asyncio.timeout(self.timeout_s):
                while True:
                    message = await receive()
                    if message["type"] != "http.request":
                        return message  # the client left mid-body: the app is told so
                    chunk: bytes = message.get("body", b"")
                    if seen + len(chunk) > limit:
                        raise _Refusal(413, "payload_too_large",
                                       f"the body is over {limit} bytes")  # fmt: skip
                    if self.buffered + len(chunk) > self.budget:
                        raise _Refusal(503, "busy", "the server holds as many unfinished"
                                       " request bodies as it may (api.max_buffered_bytes):"
                                       " retry later")  # fmt: skip
                    seen += len(chunk)
                    self.buffered += len(chunk)
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        return {"type": "http.request", "body": b"".join(chunks)}
        except TimeoutError:
            raise _Refusal(408, "request_timeout", "the body did not arrive within"
                           f" {self.timeout_s:g} s (api.body_timeout_s)") from None  # fmt: skip
        finally:
            self.buffered -= seen


def _authenticated(scope: Scope) -> bool:
    """Whether a write may send its body: a known token, or loopback in open mode. A
    refusal is logged and counted as the routes' are."""
    request = Request(scope)
    book: TokenBook = scope["app"].state.tokens
    try:
        caller = caller_of(request, book)
    except CallRefused as refused:
        reason = refused.reason
    else:
        if caller.role is not None:
            scope[CALLER_KEY] = caller  # the routes' dependency takes it (``api/deps.py``)
            return True
        reason = "unauthenticated"
    refusals_of(scope["app"])[reason] += 1
    log_refusal(request, reason, "refused before its body was read")
    return False


async def _too_large(send: Send, limit: int) -> None:
    await refuse(send, 413, "payload_too_large", f"the body is over {limit} bytes")
