"""Run the served app with uvicorn on a socket already bound: the HTTP protocol with the
limits of ``api:`` (``api/protocol.py``), proxy headers believed only from
``api.trusted_proxies``, a start-up failure of the app (its lifespan) told in one line, and
a stop that always ends.

On SIGTERM (or SIGINT) uvicorn stops accepting, gives the requests in flight
``api.shutdown_grace_s`` to finish, cancels those left and closes the services (the
store, the agents' connections). Each of these can wait on something that never comes:
a write waiting for a SQLite file another process holds locked (60 s per statement), a
NATS server that stopped answering, a request whose work cannot be interrupted. So the
first signal also arms a watchdog (``StopWatchdog``): ``STOP_MARGIN_S`` after the grace,
if the process is still there, it logs that the stop overran, writes what every thread
is doing (``faulthandler``) and ends the process with exit status 1. A second watchdog in
C (``faulthandler.dump_traceback_later``) does the same a little later, should the
interpreter itself be held. What was acknowledged is already stored (every store commits
before it answers), so ending at that point loses nothing acknowledged; gunicorn ends a
worker that overruns its ``graceful_timeout`` with SIGKILL the same way.
"""

from __future__ import annotations

import faulthandler
import logging
import os
import signal
import socket
import sys
import threading
from types import FrameType
from typing import Any

import uvicorn
from fastapi import FastAPI
from starlette.types import Message, Receive, Scope, Send

from agentladder.api.protocol import ProtocolLimits, guarded_protocol
from agentladder.config import Settings
from agentladder.errors import AgentladderError
from agentladder.services.gateway.feedback import FEEDBACK_LOG

__all__ = ["STOP_MARGIN_S", "OneLineStartup", "SignalledServer", "StopWatchdog", "run_server"]

log = logging.getLogger(__name__)

STOP_MARGIN_S = 5.0
"""How long after ``api.shutdown_grace_s`` a stop may still run (closing the store)."""
_C_MARGIN_S = 2.0
"""How much later the watchdog in C ends the process, should the first one not run."""


class StopWatchdog:
    """Ends the process ``limit_s`` after it was armed (the first stop signal) unless it
    ended by itself before."""

    def __init__(self, limit_s: float) -> None:
        self.limit_s = limit_s
        self.armed = False

    def arm(self, sig: int) -> None:
        """Start counting (once)."""
        if self.armed:
            return
        self.armed = True
        log.warning(
            "stopping on %s: requests in flight have the grace to finish, and the process"
            " ends within %.0f s whatever it is doing", signal.Signals(sig).name, self.limit_s,
        )  # fmt: skip
        faulthandler.dump_traceback_later(self.limit_s + _C_MARGIN_S, exit=True)
        threading.Thread(target=self._watch, name="stop-watchdog", daemon=True).start()

    def _watch(self) -> None:
        threading.Event().wait(self.limit_s)
        log.error(
            "the stop overran its %.0f s (api.shutdown_grace_s + %.0f): ending the process;"
            " what each thread was doing follows", self.limit_s, STOP_MARGIN_S,
        )  # fmt: skip
        faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
        sys.stderr.flush()
        os._exit(1)


class SignalledServer(uvicorn.Server):
    """uvicorn's server whose first stop signal arms the watchdog and tells the app which
    signal stopped it (``app.state.stop_signal``: ``SIGINT`` for Ctrl-C), so that what the
    shutdown interrupts names its real cause."""

    def __init__(self, config: uvicorn.Config, app: FastAPI, watchdog: StopWatchdog) -> None:
        super().__init__(config)
        self.app_state = app.state
        self.watchdog = watchdog

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """Remember the first signal and arm the watchdog, then stop as uvicorn does."""
        if getattr(self.app_state, "stop_signal", None) is None:
            self.app_state.stop_signal = signal.Signals(sig).name
        self.watchdog.arm(sig)
        super().handle_exit(sig, frame)


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


def _show_feedback() -> None:
    """Callers' feedback and its comments (``FEEDBACK_LOG``, at INFO) go to the standard
    error, as uvicorn's own lines do; the rest of agentladder logs warnings only."""
    logger = logging.getLogger(FEEDBACK_LOG)
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s:     %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False


def run_server(
    app: FastAPI, settings: Settings, sock: socket.socket, *, debug: bool = False
) -> None:
    """Serve ``app`` on ``sock`` until stopped (SIGINT, SIGTERM: within
    ``api.shutdown_grace_s + STOP_MARGIN_S``, whatever it is doing); uvicorn exits 3 when
    the app does not start."""
    api = settings.api
    limits = ProtocolLimits(api.max_connections, api.header_timeout_s, api.max_header_bytes)
    trusted = list(api.trusted_proxies)
    wrapped = OneLineStartup(app, debug)
    options: dict[str, Any] = {
        "log_level": "debug" if debug else "info",
        "access_log": api.access_log,
        "timeout_graceful_shutdown": api.shutdown_grace_s,
        "timeout_keep_alive": api.keep_alive_s,
        "proxy_headers": bool(trusted),  # believed only from api.trusted_proxies
        "forwarded_allow_ips": trusted or None,
        "http": guarded_protocol(limits),
    }
    _show_feedback()
    watchdog = StopWatchdog(api.shutdown_grace_s + STOP_MARGIN_S)
    SignalledServer(uvicorn.Config(wrapped, **options), app, watchdog).run(sockets=[sock])
