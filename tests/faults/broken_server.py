"""A misbehaving OpenAI-compatible chat-completions server, in its own OS process.

Run as a script (stdlib only), it serves HTTP/1.1 with keep-alive on 127.0.0.1 and a free
port (printed as ``PORT <n>`` on stdout) until SIGTERM or SIGINT. ``BrokenServer`` starts
it with the running Python, reads the port, reads its counters and stops it by its pid.

``POST /v1/chat/completions`` behaves as the request's ``model`` says, ``<behaviour>`` or
``<behaviour>:<argument>``:

- ``good[:score]``: a valid answer; an evaluation request (the prompt asks for JSON) gets
  ``{"score": <score>, "rationale": ...}`` (score 7 by default).
- ``hang``: reads the request and never answers; the handler waits until the client
  closes the connection.
- ``garbage``: HTTP 200 with a body that is not a usable answer, in turn: HTML, JSON
  that is not chat-completions, content that is not a string, cut JSON, bytes that are not
  UTF-8, a deeply nested array, an empty answer; evaluation requests also get prose with
  no score, scores out of range or not numbers, and a deeply nested object.
- ``close``: closes the TCP connection mid-exchange, in turn: right after reading the
  request, with a reset after reading the request, in the middle of the status
  line, and after part of a declared body.
- ``slow:<ms>``: a valid answer after ``ms`` milliseconds.
- ``trickle``: a 200 declaring a long body, then one byte every 50 ms until the client
  gives up.
- ``http500``: HTTP 500 with a JSON error body.
- ``malformed``: HTTP 200 whose body is always cut JSON (a chat completion that stops
  half-way), to propose and evaluate requests alike.
- ``ratelimit[:seconds]``: HTTP 429 with ``Retry-After: <seconds>`` (30 by default) and an
  OpenAI-style error body, to every request.

``GET /stats`` returns the counters as JSON: connections ``open`` now (other than the one
asking), ``max_open``, ``accepted``, requests ``stuck`` now (hanging or trickling), and
``requests`` per behaviour. A connection is open from its accept until its handler has
closed it; a client that forgets a connection shows up here as an open connection that
never goes away.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import socket
import struct
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

__all__ = ["BEHAVIOURS", "GARBAGE_BODIES", "GARBAGE_EVALUATIONS", "BrokenServer"]

BEHAVIOURS = (
    "good", "hang", "garbage", "close", "slow", "trickle", "http500", "malformed", "ratelimit",
)  # fmt: skip
HOST = "127.0.0.1"
# One behaviour's handler: the request's stream pair, its parsed body, and the model's argument.
_Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, Any, str], Awaitable[bool]]
NESTING = 5_000  # deeper than the JSON parser's recursion limit (1000)

GARBAGE_BODIES: tuple[bytes, ...] = (
    b"<html><body><h1>502 Bad Gateway</h1></body></html>",
    b'{"result": "forty-two", "status": "ok"}',
    json.dumps({"choices": [{"message": {"role": "assistant", "content": 42}}]}).encode(),
    b'{"choices": [{"message": {"role": "assistant", "content": "The answ',
    b"\xff\xfe\x00\x01garbage\x80\x81",
    b"[" * NESTING,
    json.dumps({"choices": [{"message": {"role": "assistant", "content": "   "}}]}).encode(),
)
GARBAGE_EVALUATIONS: tuple[str, ...] = (
    "Looks fine to me, well argued.",
    '{"score": 42, "rationale": "off the scale"}',
    '{"score": "very good", "rationale": "words"}',
    '{"score": NaN}',
    '{"a": ' * NESTING,
    "{" * 200_000,  # a failed decode from each brace would cost the square of this
)


def _completion(content: str) -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-broken",
            "object": "chat.completion",
            "model": "broken",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28},
        }
    ).encode()


def _response(status: int, body: bytes, reason: str = "OK", extra: str = "") -> bytes:
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n{extra}"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def _is_evaluation(body: Any) -> bool:
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list) or not messages:
        return False
    last = messages[-1]
    return isinstance(last, dict) and "Reply with JSON only" in str(last.get("content", ""))


class _Service:
    """The server's state and its connection handler."""

    def __init__(self) -> None:
        self.open = 0
        self.max_open = 0
        self.accepted = 0
        self.stuck = 0
        self.requests: Counter[str] = Counter()
        self.turns: Counter[str] = Counter()  # rotation through variants, per behaviour
        self.handlers: set[asyncio.Task[Any]] = set()

    def stats(self) -> dict[str, Any]:
        return {
            "open": self.open - 1,  # not counting the connection asking
            "max_open": self.max_open,
            "accepted": self.accepted,
            "stuck": self.stuck,
            "requests": dict(self.requests),
        }

    def _turn(self, key: str, size: int) -> int:
        index = self.turns[key] % size
        self.turns[key] += 1
        return index

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.handlers.add(task)
        self.accepted += 1
        self.open += 1
        self.max_open = max(self.max_open, self.open)
        try:
            while await self._one(reader, writer):
                pass
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass  # the client went away mid-request
        finally:
            self.open -= 1
            self.handlers.discard(task)
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Serve one request; False when the connection is to be closed."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return False  # the client closed an idle keep-alive connection
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        if method == "GET" and path == "/stats":
            writer.write(_response(200, json.dumps(self.stats()).encode()))
            await writer.drain()
            return True
        raw = await reader.readexactly(length) if length else b""
        body: Any = None
        with contextlib.suppress(ValueError):
            body = json.loads(raw)
        model = str(body.get("model", "")) if isinstance(body, dict) else ""
        behaviour, _, argument = model.partition(":")
        if method != "POST" or behaviour not in BEHAVIOURS:
            writer.write(_response(404, b'{"error": {"message": "unknown model"}}', "Not Found"))
            await writer.drain()
            return True
        self.requests[behaviour] += 1
        handler: _Handler = getattr(self, f"_{behaviour}")
        return await handler(reader, writer, body, argument)

    async def _good(
        self, _: asyncio.StreamReader, writer: asyncio.StreamWriter, body: Any, argument: str
    ) -> bool:
        if _is_evaluation(body):
            score = float(argument) if argument else 7.0
            content = json.dumps({"score": score, "rationale": "Correct and complete."})
        else:
            content = "A careful answer: the clause on unlimited liability is the risky one."
        writer.write(_response(200, _completion(content)))
        await writer.drain()
        return True

    async def _slow(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, body: Any, argument: str
    ) -> bool:
        await asyncio.sleep(float(argument or "0") / 1000)
        return await self._good(reader, writer, body, "")

    async def _hang(
        self, reader: asyncio.StreamReader, _: asyncio.StreamWriter, body: Any, argument: str
    ) -> bool:
        self.stuck += 1
        try:
            while await reader.read(65536):
                pass  # whatever the client sends, no answer
        finally:
            self.stuck -= 1
        return False

    async def _garbage(
        self, _: asyncio.StreamReader, writer: asyncio.StreamWriter, body: Any, argument: str
    ) -> bool:
        if _is_evaluation(body):
            choices = len(GARBAGE_BODIES) + len(GARBAGE_EVALUATIONS)
            index = self._turn("garbage-evaluate", choices)
            if index < len(GARBAGE_BODIES):
                data = GARBAGE_BODIES[index]
            else:
                data = _completion(GARBAGE_EVALUATIONS[index - len(GARBAGE_BODIES)])
        else:
            data = GARBAGE_BODIES[self._turn("garbage-propose", len(GARBAGE_BODIES))]
        writer.write(_response(200, data))
        await writer.drain()
        return True

    async def _close(
        self, _: asyncio.StreamReader, writer: asyncio.StreamWriter, body: Any, argument: str
    ) -> bool:
        variant = self._turn("close", 4)
        if variant == 1:  # a reset rather than an orderly close
            sock = writer.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        elif variant == 2:
            writer.write(b"HTTP/1.1 200 O")
        elif variant == 3:
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b'Content-Length: 500\r\n\r\n{"choices": [{"mess'
            )
        await writer.drain()
        return False

    async def _trickle(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, body: Any, argument: str
    ) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
        writer.write(b"Content-Length: 100000\r\n\r\n")
        self.stuck += 1
        try:
            while not reader.at_eof():  # until the client closes (or drain raises on a reset)
                writer.write(b" ")
                await writer.drain()
                await asyncio.sleep(0.05)
        finally:
            self.stuck -= 1
        return False

    async def _http500(
        self, _: asyncio.StreamReader, writer: asyncio.StreamWriter, body: Any, argument: str
    ) -> bool:
        error = b'{"error": {"message": "internal error", "type": "server_error"}}'
        writer.write(_response(500, error, "Internal Server Error"))
        await writer.drain()
        return True

    async def _malformed(
        self, _: asyncio.StreamReader, writer: asyncio.StreamWriter, body: Any, argument: str
    ) -> bool:
        writer.write(_response(200, _completion("A careful answer.")[:60]))
        await writer.drain()
        return True

    async def _ratelimit(
        self, _: asyncio.StreamReader, writer: asyncio.StreamWriter, body: Any, argument: str
    ) -> bool:
        error = b'{"error": {"message": "Rate limit reached", "type": "rate_limit_exceeded"}}'
        wait = f"Retry-After: {argument or '30'}\r\n"
        writer.write(_response(429, error, "Too Many Requests", wait))
        await writer.drain()
        return True


async def _serve() -> None:
    service = _Service()
    server = await asyncio.start_server(service.handle, HOST, 0, limit=1 << 20, backlog=512)
    port = server.sockets[0].getsockname()[1]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)
    print(f"PORT {port}", flush=True)
    try:
        await stop.wait()
    finally:
        server.close()
        for task in list(service.handlers):
            task.cancel()
        await asyncio.gather(*service.handlers, return_exceptions=True)
        await server.wait_closed()


class BrokenServer:
    """The server above as a child process; a context manager that stops it by its pid."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[str] | None = None
        self.port = 0

    @property
    def url(self) -> str:
        """The base URL, up to and including ``/v1``."""
        return f"http://{HOST}:{self.port}/v1"

    def start(self, timeout_s: float = 10.0) -> BrokenServer:
        """Start the process and wait for its port."""
        self._process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve())],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self._process.stdout is not None
        deadline = time.monotonic() + timeout_s
        line = self._process.stdout.readline()
        if not line.startswith("PORT ") or time.monotonic() > deadline:
            self.stop()
            raise RuntimeError(f"the broken server did not start: {line!r}")
        self.port = int(line.split()[1])
        return self

    def stats(self) -> dict[str, Any]:
        """The server's counters (``GET /stats`` on a connection of its own)."""
        with urllib.request.urlopen(f"http://{HOST}:{self.port}/stats", timeout=5) as response:
            data: dict[str, Any] = json.loads(response.read())
        return data

    def settled_stats(self, timeout_s: float = 15.0) -> dict[str, Any]:
        """The counters once no request is stuck any more (the clients closed them), or as is."""
        deadline = time.monotonic() + timeout_s
        stats = self.stats()
        while stats["stuck"] and time.monotonic() < deadline:
            time.sleep(0.02)
            stats = self.stats()
        return stats

    def stop(self) -> int:
        """SIGTERM by pid, wait, close the pipes; the exit code."""
        process = self._process
        if process is None:
            return 0
        self._process = None
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            code = process.wait(timeout=10)
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
        return code

    def __enter__(self) -> BrokenServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


if __name__ == "__main__":
    asyncio.run(_serve())
