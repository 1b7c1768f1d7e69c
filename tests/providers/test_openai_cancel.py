"""A cancelled or timed-out call closes its connection, however the cancellations arrive.

The server here never answers: it accepts, reads until the client closes, and counts the
connections still open. A connection the provider's pool keeps open after a call gave up
would hang on such a server until the pool closes.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from agentladder.domain.agents import AgentConfig
from agentladder.errors import ProviderError
from agentladder.providers.base import ProposeRequest
from agentladder.providers.openai import OpenAIProvider
from agentladder.providers.settings import OpenAISettings

AGENT = AgentConfig(name="silent")
PROPOSE = ProposeRequest(deliberation_id="d1", round=1, user_query="Is 17 prime?")


class SilentServer:
    """Accepts on loopback, reads every request, never answers; counts open connections."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.open = 0
        self.requests = 0
        self.lock = threading.Lock()
        self.threads: list[threading.Thread] = []
        self.accepting = threading.Thread(target=self._accept, daemon=True)
        self.accepting.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:  # the listener is closed
                return
            with self.lock:
                self.open += 1
            thread = threading.Thread(target=self._drain, args=(conn,), daemon=True)
            self.threads.append(thread)
            thread.start()

    def _drain(self, conn: socket.socket) -> None:
        counted = False
        with conn:
            while True:
                try:
                    data = conn.recv(65536)
                except OSError:
                    break
                if not data:
                    break
                if not counted:
                    counted = True
                    with self.lock:
                        self.requests += 1
        with self.lock:
            self.open -= 1

    async def settled_open(self, timeout_s: float = 3.0) -> int:
        """Connections still open once the clients had ``timeout_s`` to close theirs."""
        deadline = time.monotonic() + timeout_s
        while self.open and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        return self.open

    async def wait_requests(self, count: int) -> None:
        deadline = time.monotonic() + 5.0
        while self.requests < count:
            assert time.monotonic() < deadline, f"{self.requests} requests, not {count}"
            await asyncio.sleep(0.005)

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def silent() -> Iterator[SilentServer]:
    server = SilentServer()
    yield server
    server.close()


def provider(server: SilentServer, timeout_s: float) -> OpenAIProvider:
    settings = OpenAISettings(base_url=f"http://127.0.0.1:{server.port}/v1", timeout_s=timeout_s)
    return OpenAIProvider(AGENT, settings)


def test_cancelled_twice_in_a_row_closes_the_connection(silent: SilentServer) -> None:
    """Cancelled from outside, then again while it cleans up: the connection still closes."""

    async def body() -> None:
        p = provider(silent, timeout_s=60.0)
        try:
            for n in range(1, 11):
                call = asyncio.ensure_future(p.propose(PROPOSE))
                await silent.wait_requests(n)
                call.cancel()
                for _ in range(n % 3):  # no pause, one or two loop turns
                    await asyncio.sleep(0)
                call.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await call
                assert await silent.settled_open() == 0, f"call {n} left its connection open"
        finally:
            await p.aclose()

    asyncio.run(body())


def test_own_timeout_and_callers_deadline_together_close_the_connection(
    silent: SilentServer,
) -> None:
    """The provider's timeout_s and a caller's deadline of the same length, 10 times."""

    async def body() -> None:
        p = provider(silent, timeout_s=0.1)
        try:
            for n in range(1, 11):
                with pytest.raises((ProviderError, TimeoutError)):
                    async with asyncio.timeout(0.1):
                        await p.propose(PROPOSE)
                assert await silent.settled_open() == 0, f"call {n} left its connection open"
            assert silent.requests == 10
        finally:
            await p.aclose()

    asyncio.run(body())
