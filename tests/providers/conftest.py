"""Fixtures of the provider tests: a real chat-completions server on loopback per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.providers.chat_server import ChatServer


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    """A started ``ChatServer`` on 127.0.0.1, stopped (threads joined) after the test."""
    with ChatServer() as server:
        yield server
