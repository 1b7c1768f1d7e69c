"""A real OpenAI-compatible chat-completions server on loopback, scripted by the tests.

It is the stdlib ``ThreadingHTTPServer`` (real sockets, HTTP/1.1 keep-alive) on
127.0.0.1 and a free port, serving in a background thread. Each request is recorded in
``seen`` and answered by the next ``Reply`` in ``replies`` (the default reply when the
queue is empty): a status and body, optionally after a delay, or the connection closed
without an answer, or a body cut short. ``stop`` wakes delayed handlers, stops serving
and joins every handler thread.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

__all__ = ["ChatServer", "Reply", "Seen", "completion"]


def completion(
    content: str | None, *, prompt_tokens: int | None = 12, completion_tokens: int | None = 5
) -> dict[str, Any]:
    """A chat-completions response body whose first choice says ``content``."""
    body: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1774001607,
        "model": "test-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }
    if prompt_tokens is not None and completion_tokens is not None:
        body["usage"] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
    return body


@dataclass(frozen=True)
class Reply:
    """How the server answers one request."""

    body: dict[str, Any] | str = field(default_factory=lambda: completion("ok"))
    status: int = 200
    delay_s: float = 0.0
    mode: Literal["answer", "close", "truncate"] = "answer"
    headers: tuple[tuple[str, str], ...] = ()
    content_type: str = "application/json"

    def data(self) -> bytes:
        """The body's bytes: a dict as JSON, a string as it is."""
        text = self.body if isinstance(self.body, str) else json.dumps(self.body)
        return text.encode()


@dataclass(frozen=True)
class Seen:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 5.0
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output quiet."""

    def do_POST(self) -> None:
        """Record the request, then answer as the next scripted reply says."""
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        chat = self.server.chat
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = raw
        reply = chat.record(Seen("POST", self.path, dict(self.headers.items()), body))
        if reply.delay_s:
            chat.stopping.wait(reply.delay_s)
        if reply.mode == "close":
            self.close_connection = True
            return
        data = reply.data()
        declared = len(data) + (1000 if reply.mode == "truncate" else 0)
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(declared))
            for name, value in reply.headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            pass  # the client gave up (a timeout test): nothing to answer to
        if reply.mode == "truncate" or chat.stopping.is_set():
            self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = False  # server_close joins every handler thread
    block_on_close = True

    def __init__(self, chat: ChatServer) -> None:
        self.chat = chat
        super().__init__(("127.0.0.1", 0), _Handler)


class ChatServer:
    """The scripted server; use as a context manager or call ``start`` and ``stop``."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.default = Reply()
        self.seen: list[Seen] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._httpd = _Server(self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self.port: int = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"

    def record(self, seen: Seen) -> Reply:
        """Record a request; the reply to give it."""
        with self._lock:
            self.seen.append(seen)
            return self.replies.popleft() if self.replies else self.default

    def start(self) -> ChatServer:
        """Serve in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Wake delayed handlers, stop serving, close the socket and join all threads."""
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
