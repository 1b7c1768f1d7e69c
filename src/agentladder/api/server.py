"""Run the served app with uvicorn on a socket already bound: the HTTP protocol with the
limits of ``api:`` (``api/protocol.py``), proxy headers believed only from
``api.trusted_proxies``, and a start-up failure of the app (its lifespan) told in one line.
"""

from __future__ import annotations

import signal
import socket
from types import FrameType
from typing import Any

import uvicorn
from fastapi import FastAPI
from starlette.types import Message, Receive, Scope, Send

from agentladder.api.protocol import ProtocolLimits, guarded_protocol
from agentladder.config import Settings
from agentladder.errors import AgentladderError

__all__ = ["OneLineStartup", "SignalledServer", "run_server"]


class OneLineStartup:
    """An ASGI wrapper: when the lifespan's start-up fails with one of agentladder's own
    errors, uvicorn is told its one-line message instead of the traceback (unless
    ``debug``), and exits 3."""

    def __init__(self, app: FastAPI, debug: bool) -> None:
        self.app = app
        self.debug = debug

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return

        async def told(message: Message) -> None:
            failure = getattr(self.app.state, "startup_failure", None)
            failed = message["type"] == "lifespan.startup.failed"
            if failed and isinstance(failure, AgentladderError) and not self.debug:
                message = {**message, "message": f"cannot start: {failure}"}
            await send(message)

        await self.app(scope, receive, told)


class SignalledServer(uvicorn.Server):
    """uvicorn's server, telling the app which signal stopped it (``app.state.stop_signal``:
    ``SIGINT`` for Ctrl-C), so that what the shutdown interrupts names its real cause."""

    def __init__(self, config: uvicorn.Config, app: FastAPI) -> None:
        super().__init__(config)
        self.app_state = app.state

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """Remember the first signal, then stop as uvicorn does."""
        if getattr(self.app_state, "stop_signal", None) is None:
            self.app_state.stop_signal = signal.Signals(sig).name
        super().handle_exit(sig, frame)


def run_server(
    app: FastAPI, settings: Settings, sock: socket.socket, *, debug: bool = False
) -> None:
    """Serve ``app`` on ``sock`` until stopped (SIGINT, SIGTERM); uvicorn exits 3 when the
    app does not start."""
    api = settings.api
    limits = ProtocolLimits(api.max_connections, api.header_timeout_s, api.max_header_bytes)
    trusted = list(api.trusted_proxies)
    wrapped = OneLineStartup(app, debug)
    options: dict[str, Any] = {
        "log_level": "debug" if debug else "info",
        "timeout_graceful_shutdown": api.shutdown_grace_s,
        "timeout_keep_alive": api.keep_alive_s,
        "proxy_headers": bool(trusted),  # believed only from api.trusted_proxies
        "forwarded_allow_ips": trusted or None,
        "http": guarded_protocol(limits),
    }
    SignalledServer(uvicorn.Config(wrapped, **options), app).run(sockets=[sock])
