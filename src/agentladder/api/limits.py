"""``RequestGuard``: what a request must be before the routes see it, as an ASGI middleware.

- one ``Authorization`` header at most (two: 400, since a proxy may read them the other
  way round);
- a body of at most ``api.max_body_bytes`` (413: a declared Content-Length over it at
  once, a chunked one as soon as it passes it), buffered and handed on whole;
- a JSON body of a write names each key of an object once (400: a proxy or another
  parser may keep the first where this one keeps the last).
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["RequestGuard", "duplicate_key"]

_WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


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
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})  # fmt: skip
    await send({"type": "http.response.body", "body": body})


class RequestGuard:
    """Refuse what no route may see (the module says what), before the routes run."""

    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.limit = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw: list[tuple[bytes, bytes]] = scope.get("headers") or []
        if sum(1 for name, _ in raw if name == b"authorization") > 1:
            await refuse(send, 400, "bad_request", "give one Authorization header, not several")
            return
        headers = dict(raw)
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await _too_large(send, self.limit)
            return
        chunks: list[bytes] = []
        seen = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break  # the client left mid-body: the app is told so, as without this
            chunk: bytes = message.get("body", b"")
            seen += len(chunk)
            if seen > self.limit:
                await _too_large(send, self.limit)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                message = {"type": "http.request", "body": b"".join(chunks)}
                break
        if message["type"] == "http.request" and scope["method"] in _WRITES and _is_json(headers):
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


async def _too_large(send: Send, limit: int) -> None:
    await refuse(send, 413, "payload_too_large", f"the body is over {limit} bytes")
