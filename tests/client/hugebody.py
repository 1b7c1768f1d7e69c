"""A plain asyncio HTTP/1.1 server on loopback, run in a thread, that answers bodies far
larger than the client should read, and counts the bytes it managed to send: what the
client made it send before it closed the connection.

The agent id of ``GET /oracle/profiles/{id}`` picks the answer:

- ``announced-<MiB>``: 200 with ``Content-Length`` of that many MiB, then the bytes;
- ``chunked-<MiB>``: 200, chunked, no length: a JSON start, then that many MiB;
- ``error-<MiB>``: 400, chunked: the API's error object, then that many MiB of spaces
  (valid JSON however far it is read);
- anything else: a small profile.
"""

from __future__ import annotations

import asyncio
import json
import threading

__all__ = ["PIECE", "HugeServer"]

PIECE = 64 * 1024
"""Bytes per write (each awaited: ``drain``)."""
MIB = 1024 * 1024
PROFILE = {"id": "small", "xp": 40, "level": "rookie"}
REFUSED = {"error": {"code": "bad_request", "message": "the server's own words"}}


class HugeServer:
    """The server: ``start`` it, read ``base``, ``wait_sent(id)`` for an answer's count."""

    def __init__(self) -> None:
        self.base = ""
        self.sent: dict[str, int] = {}
        """Bytes of each answer's body sent (handed to the socket and drained), by id."""
        self._done: dict[str, threading.Event] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None

    def start(self) -> HugeServer:
        """Listen on 127.0.0.1 on a free port, serving from a thread."""
        self._thread.start()
        started = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._serve, "127.0.0.1", 0), self._loop
        )
        self._server = started.result(timeout=10)
        port = self._server.sockets[0].getsockname()[1]
        self.base = f"http://127.0.0.1:{port}"
        return self

    def stop(self) -> None:
        """Close the server and stop its thread."""

        async def close() -> None:
            if self._server is not None:
                self._server.close()

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    def wait_sent(self, answer: str) -> int:
        """The bytes of ``answer``'s body sent, once it has stopped sending (bounded)."""
        event = self._done.setdefault(answer, threading.Event())
        assert event.wait(timeout=60), f"{answer}: still sending"
        return self.sent[answer]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        path = head.split(b" ", 2)[1].decode()
        answer = path.rsplit("/", 1)[-1]
        kind, _, size = answer.partition("-")
        self.sent[answer] = 0
        try:
            if kind == "announced":
                total = int(size) * MIB
                writer.write(_head(200, f"Content-Length: {total}"))
                await self._pieces(writer, answer, total, chunked=False)
            elif kind in ("chunked", "error"):
                start = b'{"id": "' if kind == "chunked" else json.dumps(REFUSED).encode()
                writer.write(_head(200 if kind == "chunked" else 400, "Transfer-Encoding: chunked"))
                writer.write(_chunk(start))
                self.sent[answer] += len(start)
                await self._pieces(writer, answer, int(size) * MIB, chunked=True)
                writer.write(b"0\r\n\r\n")
                await writer.drain()
            else:
                body = json.dumps(PROFILE).encode()
                writer.write(_head(200, f"Content-Length: {len(body)}") + body)
                await writer.drain()
                self.sent[answer] += len(body)
        except (ConnectionError, OSError):
            pass  # the client went away: what it made the server send is counted
        finally:
            self._done.setdefault(answer, threading.Event()).set()
            writer.close()

    async def _pieces(
        self, writer: asyncio.StreamWriter, answer: str, total: int, *, chunked: bool
    ) -> None:
        """Write ``total`` bytes (spaces) in pieces, each drained and then counted, until
        the peer goes away."""
        piece = b" " * PIECE
        for _ in range(total // PIECE):
            if writer.is_closing():
                return
            writer.write(_chunk(piece) if chunked else piece)
            await writer.drain()
            self.sent[answer] += PIECE


def _head(status: int, framing: str) -> bytes:
    reason = {200: "OK", 400: "Bad Request"}[status]
    return (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n{framing}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"
