"""Fixtures for tests against a real nats-server (started by agentladder.natsserver)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentladder.natsserver import NatsServer


@pytest.fixture
def nats_server() -> Iterator[NatsServer]:
    """A fresh single nats-server with JetStream on loopback, stopped and removed after."""
    with NatsServer() as server:
        yield server
