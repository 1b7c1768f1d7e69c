"""The nats-server runner starts real servers on loopback and stops them by pid."""

from __future__ import annotations

import asyncio
import os
import re
import time
from pathlib import Path

import pytest
from nats.js.errors import NoStreamResponseError

import nats
from agentladder.errors import StoreUnavailable
from agentladder.natsserver import ENV_BINARY, NatsServer, cluster, find_binary, free_ports


async def _put(url: str, key: str, value: bytes, *, replicas: int = 1) -> int:
    nc = await nats.connect(url)
    try:
        # an R3 bucket needs its stream's leader elected: slow on a loaded machine
        kv = await nc.jetstream(timeout=30).create_key_value(bucket="runner", replicas=replicas)
        deadline = time.monotonic() + 30
        while True:
            try:
                return await kv.put(key, value)
            except NoStreamResponseError:
                # created, but its R3 group has no leader yet: nothing acked, try again
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.1)
    finally:
        await nc.close()


async def _get(url: str, key: str) -> tuple[bytes | None, int | None]:
    nc = await nats.connect(url)
    try:
        kv = await nc.jetstream(timeout=30).key_value("runner")
        deadline = time.monotonic() + 30
        while True:
            try:
                entry = await kv.get(key)
                return entry.value, entry.revision
            except nats.errors.TimeoutError:
                # a just-formed R3 group on a loaded machine: the read was not answered
                # yet (nothing is changed by asking again)
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.1)
    finally:
        await nc.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_server_listens_on_loopback_with_jetstream(nats_server: NatsServer) -> None:
    """The server's URL is on 127.0.0.1 and a KV bucket can be written and read."""
    assert nats_server.url == f"nats://127.0.0.1:{nats_server.port}"
    assert "-a" in nats_server.command()
    assert "127.0.0.1" in nats_server.command()
    revision = asyncio.run(_put(nats_server.url, "agent-1", b"hello"))
    assert asyncio.run(_get(nats_server.url, "agent-1")) == (b"hello", revision)


def test_stop_ends_the_process(nats_server: NatsServer) -> None:
    """stop() terminates the server process: its pid no longer exists."""
    pid = nats_server.pid
    assert pid is not None
    assert _alive(pid)
    nats_server.stop()
    assert nats_server.pid is None
    assert not _alive(pid)


def test_restart_keeps_kv_data(nats_server: NatsServer) -> None:
    """After stop and start on the same port and folder, KV entries are still there."""
    revision = asyncio.run(_put(nats_server.url, "agent-1", b"kept"))
    old_pid, url = nats_server.pid, nats_server.url
    nats_server.restart()
    assert nats_server.pid != old_pid
    assert nats_server.url == url
    assert asyncio.run(_get(nats_server.url, "agent-1")) == (b"kept", revision)


def test_kill_then_restart_keeps_acknowledged_data(nats_server: NatsServer) -> None:
    """After SIGKILL (a crash) and a restart, every acknowledged KV put is still there."""
    revision = asyncio.run(_put(nats_server.url, "agent-1", b"acked"))
    pid = nats_server.pid
    assert pid is not None
    nats_server.kill()
    assert not _alive(pid)
    nats_server.start()
    assert asyncio.run(_get(nats_server.url, "agent-1")) == (b"acked", revision)


def test_missing_binary_raises_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """AGENTLADDER_NATS_SERVER naming a missing file raises FileNotFoundError naming it."""
    missing = tmp_path / "no-such-nats-server"
    monkeypatch.setenv(ENV_BINARY, str(missing))
    with pytest.raises(FileNotFoundError, match=ENV_BINARY) as caught:
        NatsServer()
    assert str(missing) in str(caught.value)


def test_binary_is_found_without_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the variable, the nats-server installed next to Python is used."""
    monkeypatch.delenv(ENV_BINARY, raising=False)
    assert find_binary().name == "nats-server"


def test_failed_start_raises_with_the_server_log(tmp_path: Path) -> None:
    """A server that cannot start raises StoreUnavailable quoting its own log."""
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    server = NatsServer(store_dir=not_a_folder, startup_timeout=5.0)
    with pytest.raises(StoreUnavailable, match="nats-server exited"):
        server.start()
    server.close()
    assert server.pid is None


def test_a_server_that_never_gets_ready_shows_its_log_before_the_repeated_warnings() -> None:
    """A cluster member whose peers never come waits its timeout, then raises with its log.

    While it waits, every ``/healthz`` poll logs the same warning; the error shows it once
    with a count, so the lines that came before (where the cause usually is) stay shown.
    """
    peer_port, own_port = (int(port) for port in free_ports(2))
    routes = (f"nats://127.0.0.1:{peer_port}", f"nats://127.0.0.1:{own_port}")
    server = NatsServer(
        name="lonely",
        cluster_name="lonely",
        cluster_port=own_port,
        routes=routes,
        startup_timeout=2.0,
    )
    try:
        with pytest.raises(StoreUnavailable, match=r"not ready after 2\.0 s") as raised:
            server.start()
    finally:
        server.close()
    message = str(raised.value)
    assert "Listening for route connections" in message
    assert re.search(r"\(repeated \d+ more times\)", message)
    assert message.count("Healthcheck failed") <= 3


def test_context_manager_removes_its_temporary_folder() -> None:
    """Leaving the with-block stops the server and deletes its temporary store folder."""
    with NatsServer() as server:
        folder, pid = server.store_dir, server.pid
        assert folder.is_dir()
        assert pid is not None
    assert not folder.exists()
    assert not _alive(pid)


def test_cluster_of_three_replicates_a_kv_bucket() -> None:
    """Three routed servers form one JetStream cluster: an R3 put on one is read on another."""
    with cluster(3) as servers:
        assert len({server.port for server in servers}) == 3
        revision = asyncio.run(_put(servers[0].url, "agent-1", b"r3", replicas=3))
        assert asyncio.run(_get(servers[2].url, "agent-1")) == (b"r3", revision)
