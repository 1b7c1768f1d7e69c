"""Fixtures shared by the suites: every store backend through one fixture (`with_store`).

The NATS backend runs against one real nats-server (JetStream in a temporary folder) for
the whole session, one per pytest-xdist worker; each test gets its own prefix and rank
bucket, so tests are isolated.
A missing nats-server binary is an error, never a skip. Its store folder is on /dev/shm
when there is one: every atomic batch commit makes the server sync its file store (about
7 ms on this machine's disk, under 1 ms on tmpfs), and the contract does not depend on the
disk. ``tests/store/test_nats_store.py`` restarts a server of its own on a real disk.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from agentladder.natsserver import NatsServer
from agentladder.store.base import Store
from agentladder.store.url import open_store

T = TypeVar("T")
BACKENDS = ["memory", "sqlite", "nats"]

LONG_FIRST = (
    "tests/exporting/test_export_memory.py",
    "tests/api/test_schemathesis.py",
    "tests/hardening/test_event_loop.py",
    "tests/team/test_stalls.py",
    "tests/importing/test_import_killed.py",
    "tests/importing/test_import_inspect_gateway.py",
    "tests/faults/test_skill_queue_faults.py",
)
"""The files holding the suite's longest tests (half a minute to two minutes each on two
workers, docs/benchmarks.md "Test suite"), collected first: pytest-xdist hands a worker the
next file in collection order, so these start at once and the two workers end together,
not one running the export's memory probe alone for its last two minutes."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files of ``LONG_FIRST`` first, in that order; every other test keeps its
    place (a stable sort: a file's own tests keep their order)."""
    first = {path: i for i, path in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: first.get(item.nodeid.split("::", 1)[0], len(first)))


def unique_nats_url(server_url: str) -> str:
    """A NATS store URL on ``server_url`` with a prefix and rank bucket no other test uses."""
    token = uuid.uuid4().hex[:12]
    return f"{server_url}?prefix=t{token}&rank_bucket=ranks_{token}"


@pytest.fixture(scope="session")
def session_nats_server() -> Iterator[NatsServer]:
    """One nats-server with JetStream on loopback for the session (each pytest-xdist worker's
    own: its ports from the OS, its own folder), stopped by pid at the end."""
    shm = Path("/dev/shm")
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    folder = tempfile.mkdtemp(
        prefix=f"agentladder-nats-{worker}-", dir=shm if shm.is_dir() else None
    )
    try:
        with NatsServer(store_dir=folder) as server:
            yield server
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def short_path() -> Iterator[Path]:
    """A fresh empty folder with a short path, removed after the test: for a test whose
    expected message shows a path whole. An error shows a value cut to 80 characters, and
    ``tmp_path`` is longer under pytest-xdist (``.../popen-gw0/...``) or a long user name."""
    folder = Path(tempfile.mkdtemp(prefix="al-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def nats_store_url(session_nats_server: NatsServer) -> str:
    """The URL of a fresh, empty NATS store on the session's server."""
    return unique_nats_url(session_nats_server.url)


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of a fresh, empty store of each backend."""
    if request.param == "memory":
        return "memory://"
    if request.param == "nats":
        return str(request.getfixturevalue("nats_store_url"))
    return f"sqlite:///{tmp_path / 'agentladder.db'}"


@pytest.fixture
def with_store(store_url: str) -> Callable[..., Any]:
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
