"""``RequestGuard``: what a request must be before the routes see it, as an ASGI middleware.

- one ``Authorization`` header at most (two: 400, since a proxy may read them the other
  way round);
- a write (POST, PUT, PATCH, DELETE) is authenticated before its body is read: without a
  known token (or, with no tokens configured, from a loopback client) it is refused 401
  at once, whatever the path, and its body never buffered (the message tells no token,
  naming the roles the route declares, from a token matching none: ``api/auth.py``);
- a body of at most ``api.max_body_bytes`` (413: a declared Content-Length over it at
  once, a chunked one as soon as it passes it), buffered and handed on whole; under
  ``/v1/`` (the gateway: a chat's whole context, images inlined) at most
  ``gateway.max_body_bytes`` instead;
- it arrives within ``api.body_timeout_s`` of its headers (408 ``request_timeout``);
- the bodies being buffered by all requests together hold at most
  ``api.max_buffered_bytes`` (503 ``busy``, with ``Retry-After``, for the one past it),
  those of one token at most its share (429 ``rate_limit_exceeded``), those of one role
  at most the role's (503 ``busy``); a caller without a token buffers nothing (401);
- a token's requests in flight and its rate are within its bounds (429
  ``rate_limit_exceeded`` with ``Retry-After``, before the body is read;
  ``api/caller_bounds.py``), the rate's ``x-ratelimit-*`` headers on each answer;

each refusal followed by the close of the connection, in OpenAI's error shape under
``/v1/`` for a 401 and a 429 (``api/gateway_errors.py``), the API's elsewhere;
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

from agentladder.api.auth import CALLER_KEY, Caller, TokenBook, caller_of, unauthenticated
from agentladder.api.caller_bounds import CallerBounds, Excess, Passage
from agentladder.api.errors import BEARER, CallRefused, log_refusal, refusals_of
from agentladder.api.route_roles import RouteRoles

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


async def refuse(
    send: Send, status: int, code: str, message: str, *, openai: bool = False,
    retry_after_s: int = 1, more: tuple[tuple[bytes, bytes], ...] = (),
) -> None:  # fmt: skip
    """An error in the one shape (OpenAI's with ``openai``: ``type``, ``param`` too), and
    the connection closed after it; ``more``: headers to add."""
    error: dict[str, str | None] = {"code": code, "message": message}
    if openai:
        error = {"message": message, "type": _OPENAI_TYPES.get(status, "server_error"),
                 "param": None, "code": code}  # fmt: skip
    body = json.dumps({"error": error}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length",
               str(len(body)).encode()), (b"connection", b"close"), *more]  # fmt: skip
    if status in (429, 503):
        headers.append((b"retry-after", str(retry_after_s).encode()))
    if status == 401:
        headers.append((b"www-authenticate", BEARER.encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


_OPENAI_TYPES = {401: "authentication_error", 429: "rate_limit_error"}
_RATE_LIMITED = "rate_limit_exceeded"


class _Refusal(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        self.status = status
        self.code = code
        self.message = message


def _declares_body(headers: dict[bytes, bytes]) -> bool:
    length = headers.get(b"content-length", b"0").strip()
    return b"transfer-encoding" in headers or length not in (b"0", b"")


class RequestGuard:
    """Refuse what no route may see (the module says what), before the routes run."""

    def __init__(
        self, app: ASGIApp, max_body_bytes: int, body_timeout_s: float, bounds: CallerBounds,
        gateway_max_body_bytes: int | None = None,
    ) -> None:  # fmt: skip
        self.app = app
        self.limit = max_body_bytes
        self.gateway_limit = gateway_max_body_bytes or max_body_bytes
        self.timeout_s = body_timeout_s
        self.bounds = bounds
        """Each caller's requests in flight, rate and buffered bytes."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw: list[tuple[bytes, bytes]] = scope.get("headers") or []
        if sum(1 for name, _ in raw if name == b"authorization") > 1:
            await refuse(send, 400, "bad_request", "give one Authorization header, not several")
            return
        headers = dict(raw)
        caller: Caller | None = None
        gateway = scope["path"].startswith(GATEWAY_PREFIX)
        if scope["method"] in _WRITES:
            found = _authenticated(scope)
            if isinstance(found, CallRefused):
                await refuse(send, 401, "unauthorized", found.message, openai=gateway)
                return
            caller = found
        elif b"authorization" in headers or _declares_body(headers):
            caller = _identified(scope)
        if caller is None and _declares_body(headers):
            await refuse(send, 401, "unauthorized", "a bearer token is required to send a body",
                         openai=gateway)  # fmt: skip
            return
        if caller is None:
            await self._guarded(scope, headers, receive, send, None, gateway)
            return
        entry = self.bounds.enter(caller)
        if isinstance(entry, Excess):
            await refuse(send, 429, _RATE_LIMITED, entry.message, openai=gateway,
                         retry_after_s=entry.retry_after_s, more=entry.headers)  # fmt: skip
            return
        passage = entry
        if passage.headers:
            send = _with_headers(send, passage.headers)
        try:
            await self._guarded(scope, headers, receive, _leaving(send, self.bounds, passage),
                                passage, gateway)  # fmt: skip
        finally:
            self.bounds.leave(passage)

    async def _guarded(
        self, scope: Scope, headers: dict[bytes, bytes], receive: Receive, send: Send,
        passage: Passage | None, gateway: bool,
    ) -> None:  # fmt: skip
        """The body's checks, then the app."""
        limit = self.gateway_limit if gateway else self.limit
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await _too_large(send, limit)
            return
        try:
            message = await self._body(receive, limit, passage)
        except _Refusal as refused:
            await refuse(send, refused.status, refused.code, refused.message,
                         openai=gateway and refused.status in _OPENAI_TYPES)  # fmt: skip
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

    async def _body(self, receive: Receive, limit: int, passage: Passage | None) -> Message:
        """The whole body as one message (or the disconnect), within the limits and the
        caller's shares (``passage`` None: a caller without a token, who may send none)."""
        chunks: list[bytes] = []
        seen = 0
        shares = self.bounds.shares
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
                    if chunk and passage is None:
                        raise _Refusal(401, "unauthorized",
                                       "a bearer token is required to send a body")  # fmt: skip
                    if chunk and passage is not None:
                        passed = shares.admit(passage.key, passage.role, len(chunk))
                        if passed is not None:
                            raise _share_refusal(passed, passage.role)
                        seen += len(chunk)
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        return {"type": "http.request", "body": b"".join(chunks)}
        except TimeoutError:
            raise _Refusal(408, "request_timeout", "the body did not arrive within"
                           f" {self.timeout_s:g} s (api.body_timeout_s)") from None  # fmt: skip
        finally:
            if passage is not None:
                shares.release(passage.key, passage.role, seen)


def _share_refusal(passed: str, role: str) -> _Refusal:
    if passed == "token":
        return _Refusal(429, _RATE_LIMITED, "this token's unfinished request bodies hold its"
                        " share of the server's (api.max_buffered_share_per_token): retry"
                        " when one has arrived")  # fmt: skip
    if passed == "role":
        return _Refusal(503, "busy", f"the {role} role's unfinished request bodies hold its"
                        f" share of the server's (api.roles.{role}.max_buffered_share):"
                        " retry later")  # fmt: skip
    return _Refusal(503, "busy", "the server holds as many unfinished request bodies as it"
                    " may (api.max_buffered_bytes): retry later")  # fmt: skip


def _with_headers(send: Send, extra: tuple[tuple[bytes, bytes], ...]) -> Send:
    """``send`` adding ``extra`` to the response's headers."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", ()), *extra]}
        await send(message)

    return sending


def _leaving(send: Send, bounds: CallerBounds, passage: Passage) -> Send:
    """``send`` telling ``bounds`` the request has ended once its last body part is sent."""
    if not passage.counted:
        return send

    async def sending(message: Message) -> None:
        await send(message)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            bounds.leave(passage)

    return sending


def _authenticated(scope: Scope) -> Caller | CallRefused:
    """A write's caller if it may send its body (a known token, or loopback in open mode),
    else the refusal: a token matching none, or none (naming the roles its route declares).
    A refusal is logged and counted as the routes' are."""
    request = Request(scope)
    book: TokenBook = scope["app"].state.tokens
    try:
        caller = caller_of(request, book)
    except CallRefused as refusal:
        refused = refusal
    else:
        if caller.role is not None:
            scope[CALLER_KEY] = caller  # the routes' dependency takes it (``api/deps.py``)
            return caller
        known: RouteRoles = scope["app"].state.route_roles
        roles, what = known.of(scope)
        refused = unauthenticated(what, roles)
    refusals_of(scope["app"])[refused.reason] += 1
    log_refusal(request, refused.reason, "refused before its body was read")
    return refused


def _identified(scope: Scope) -> Caller | None:
    """A read's caller, if it has a role (nothing logged: its route refuses it, if need
    be)."""
    book: TokenBook = scope["app"].state.tokens
    try:
        caller = caller_of(Request(scope), book)
    except CallRefused:
        return None
    if caller.role is None:
        return None
    scope[CALLER_KEY] = caller
    return caller


async def _too_large(send: Send, limit: int) -> None:
    await refuse(send, 413, "payload_too_large", f"the body is over {limit} bytes")
