"""The HTTP protocol ``agentladder serve`` runs: uvicorn's httptools protocol with the
limits it lacks, each answered in the one error shape and followed by the close:

- at most ``api.max_connections`` connections at once: one past it is answered 503
  ``too_many_connections`` (with ``Retry-After``) as soon as it is accepted;
- a request's line and headers arrive within ``api.header_timeout_s`` of the connection
  or of the previous request's response (408 ``request_timeout`` otherwise);
- they hold at most ``api.max_header_bytes`` (431 ``headers_too_large``).

The body's own limits (its time, its size, the bytes buffered for all requests together)
are the ASGI guard's (``api/limits.py``).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any, ClassVar

import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["ProtocolLimits", "guarded_protocol", "raw_refusal"]


@dataclass(frozen=True)
class ProtocolLimits:
    """The limits of ``api:`` the protocol applies."""

    max_connections: int
    header_timeout_s: float
    max_header_bytes: int


_REASONS = {408: b"Request Timeout", 431: b"Request Header Fields Too Large",
            503: b"Service Unavailable"}  # fmt: skip


def raw_refusal(status: int, code: str, message: str) -> bytes:
    """A whole HTTP/1.1 error response in the one shape, saying the connection closes."""
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    retry = b"retry-after: 1\r\n" if status == 503 else b""
    return (
        b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
        b"%sconnection: close\r\n\r\n" % (status, _REASONS[status], len(body), retry)
    ) + body


class _HeadersTooLarge(Exception):
    pass


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the limits of ``limits`` (the module says which)."""

    limits: ClassVar[ProtocolLimits]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._header_bytes = 0

    def _refuse(self, status: int, code: str, message: str) -> None:
        self._disarm()
        if not self.transport.is_closing():
            self.transport.write(raw_refusal(status, code, message))
            self.transport.close()

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.limits.header_timeout_s, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        self._refuse(
            408, "request_timeout",
            f"the request's headers did not arrive within {self.limits.header_timeout_s:g} s",
        )  # fmt: skip

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Count the connection; refuse it past ``max_connections``; start its clock."""
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            self._refuse(503, "too_many_connections",
                         f"the server holds {self.limits.max_connections} connections, its most"
                         " (api.max_connections): retry later")  # fmt: skip
            return
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        """Stop the clock with the connection."""
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        """As uvicorn's, with headers over ``max_header_bytes`` refused 431."""
        if self.transport.is_closing():
            return
        self._unset_keepalive_if_required()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            if self._header_bytes > self.limits.max_header_bytes:
                limit = self.limits.max_header_bytes
                self._refuse(
                    431, "headers_too_large",
                    f"the request line and headers are over {limit} bytes (api.max_header_bytes)",
                )  # fmt: skip
                return
            self.logger.warning("Invalid HTTP request received.")
            self._disarm()
            self.send_400_response("Invalid HTTP request received.")
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()

    def _count(self, size: int) -> None:
        self._header_bytes += size
        if self._header_bytes > self.limits.max_header_bytes:
            raise _HeadersTooLarge  # stops the parser: data_received answers 431

    def on_message_begin(self) -> None:
        """A new request: its headers' clock starts (after a kept-alive connection's wait)."""
        super().on_message_begin()
        self._header_bytes = 0
        if self._deadline is None:
            self._arm()

    def on_url(self, url: bytes) -> None:
        """Count the request line."""
        self._count(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        """Count the header."""
        self._count(len(name) + len(value) + 4)
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        """The headers came in time: their clock stops (the body's is the guard's)."""
        self._disarm()
        super().on_headers_complete()


def guarded_protocol(limits: ProtocolLimits) -> type[GuardedHttpToolsProtocol]:
    """The protocol class with ``limits`` (uvicorn instantiates it per connection)."""
    return type("AgentladderHttpProtocol", (GuardedHttpToolsProtocol,), {"limits": limits})
