"""The contract suite runs unchanged against every backend: one fixture per store URL."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from agentladder.store.base import Store
from agentladder.store.url import open_store

T = TypeVar("T")
BACKENDS = ["memory", "sqlite"]


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of a fresh, empty store of each backend."""
    if request.param == "memory":
        return "memory://"
    return f"sqlite:///{tmp_path / 'agentladder.db'}"


@pytest.fixture
def with_store(store_url: str) -> Iterator[Callable[..., Any]]:
    """Run an async test body against an opened store, closing it afterwards."""

    def run(body: Callable[[Store], Coroutine[Any, Any, T]]) -> T:
        async def main() -> T:
            store = await open_store(store_url)
            try:
                return await body(store)
            finally:
                await store.close()

        return asyncio.run(main())

    return run
