"""`agentladder serve` on NATS JetStream while nats-server goes away.

- A single nats-server is stopped and restarted under load: the service says not ready
  meanwhile (``/readyz`` 503, writes 503), becomes ready again by itself, and nothing it
  acknowledged is lost. Once at once, once after 30 s down: every write meanwhile is
  refused with 503 as it comes (none waits for the server to come back).
- A three-node cluster (every bucket and stream with 3 replicas) under two service
  instances loses a node (SIGKILL) and gets it back: both instances keep answering,
  nothing acknowledged is lost, and both agree afterwards.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentladder.natsserver import NatsServer, cluster
from agentladder.store.url import open_store
from tests.faults.check import check_store
from tests.faults.load import Expected, Load
from tests.served import Server, start_server

AGENTS = [f"sim_{letter}" for letter in "abcdef"]
CONFIG = "orchestrator: {recover_interval_s: 0.5}\nagents:\n" + "".join(
    f"  - name: {a}\n    backend: {{kind: simulated}}\n" for a in AGENTS
)


def _wait_ready(server: Server, ready: bool, timeout: float = 30.0) -> float:
    """Seconds until ``/readyz`` says ``ready`` (200) or not (503)."""
    start = time.monotonic()
    while True:
        try:
            status = httpx.get(server.url("/readyz"), timeout=2).status_code
        except httpx.HTTPError:
            status = 0
        if (status == 200) == ready and status in (200, 503):
            return time.monotonic() - start
        assert time.monotonic() - start < timeout, f"/readyz still {status}"
        time.sleep(0.05)


def _settled(servers: list[Server], identifiers: set[str], timeout: float = 60.0) -> None:
    pending = set(identifiers)
    deadline = time.monotonic() + timeout
    while pending:
        assert time.monotonic() < deadline, f"{len(pending)} deliberations never settled"
        for identifier in list(pending):
            record = httpx.get(servers[0].url(f"/deliberation/{identifier}"), timeout=10).json()
            if record["ranking"]["state"] == record["judgments"]["state"] == "applied":
                pending.discard(identifier)
        time.sleep(0.1)


def _verify(url: str, expected: Expected) -> dict[str, int]:
    async def run() -> dict[str, int]:
        store = await open_store(url)
        try:
            return await check_store(store, expected)
        finally:
            await store.close()

    return asyncio.run(run())


def _view(server: Server) -> dict[str, Any]:
    """What an instance says about every agent: profile, stats, leaderboard."""
    agents = httpx.get(server.url("/agents"), timeout=10).json()["agents"]
    board = httpx.get(server.url("/oracle/leaderboard?limit=100"), timeout=10).json()
    profiles = {
        a: httpx.get(server.url(f"/oracle/profiles/{a}"), timeout=10).json() for a in AGENTS
    }
    return {
        "stats": {a["name"]: a["stats"] for a in agents},
        "leaderboard": board["entries"],
        "profiles": profiles,
    }


@pytest.mark.faults
def test_nats_restart_makes_the_service_unready_then_it_recovers(tmp_path: Path) -> None:
    load = Load(AGENTS, seed=11)
    with NatsServer() as nats_server:
        url = f"{nats_server.url}?prefix=restart"
        server = start_server(tmp_path, CONFIG, store=url)
        try:
            stop, threads = load.start(4, [server.base])
            try:
                load.wait_acked(100)
                nats_server.stop()
                unready_after = _wait_ready(server, ready=False)
                refused_before = load.statuses["503"]
                deadline = time.monotonic() + 15
                while load.statuses["503"] < refused_before + 10:  # writes meanwhile: 503
                    assert time.monotonic() < deadline, load.statuses
                    time.sleep(0.05)
                nats_server.start()
                ready_after = _wait_ready(server, ready=True)
                load.wait_acked(100)  # it works again, with no one restarting it
            finally:
                stop.set()
                for thread in threads:
                    thread.join(timeout=30)
            outcome = load.retry_all([server.base])
            expected = load.expected()
            _settled([server], expected.deliberations)
        finally:
            server.stop()
        figures = _verify(url, expected)
    assert outcome["kept"] >= 200
    print(
        f"not ready after {unready_after:.2f} s, ready again {ready_after:.2f} s after "
        f"the restart; retries {dict(outcome)}; statuses {dict(load.statuses)}; {figures}"
    )


@pytest.mark.faults
def test_nats_down_for_30_s_refuses_writes_at_once_then_recovers(tmp_path: Path) -> None:
    """nats-server stopped for 30 s under four writers: every write sent while it is down
    (from 1 s after the stop, when those in flight have had their answer) is answered
    503, none goes unanswered within the client's 10 s timeout, in each 5 s more are, and
    /readyz says 503; started again on the same port and folder, the service is ready by
    itself and acknowledges 100 more; nothing acknowledged is lost, nothing applied twice;
    the outage is logged in a few lines, without a traceback."""
    load = Load(AGENTS, seed=17)
    with NatsServer() as nats_server:
        url = f"{nats_server.url}?prefix=outage"
        server = start_server(tmp_path, CONFIG, store=url)
        refused_per_slice: list[int] = []
        try:
            stop, threads = load.start(4, [server.base])
            try:
                load.wait_acked(100)
                nats_server.stop()
                stopped = time.monotonic()
                unready_after = _wait_ready(server, ready=False)
                for _ in range(6):  # 30 s down, looked at every 5 s
                    before = load.statuses["503"]
                    time.sleep(5)
                    refused_per_slice.append(load.statuses["503"] - before)
                    assert httpx.get(server.url("/readyz"), timeout=5).status_code == 503
                restarted = time.monotonic()
                nats_server.start()
                ready_after = _wait_ready(server, ready=True)
                load.wait_acked(100)
            finally:
                stop.set()
                for thread in threads:
                    thread.join(timeout=30)
            outcome = load.retry_all([server.base])
            expected = load.expected()
            _settled([server], expected.deliberations)
        finally:
            log = server.stop()
        figures = _verify(url, expected)
    down = [status for sent, _, status in load.answers if stopped + 1 <= sent < restarted]
    assert down, "no write was sent while nats-server was down"
    assert set(down) == {"503"}, Counter(down)
    assert all(count > 0 for count in refused_per_slice), refused_per_slice
    assert "Traceback" not in log, log[log.index("Traceback") - 300 :][:3000]
    assert outcome["kept"] >= 200
    print(
        f"not ready after {unready_after:.2f} s; {len(down)} writes sent while down, all"
        f" 503; per 5 s {refused_per_slice}; ready again {ready_after:.2f} s after the"
        f" restart; retries {dict(outcome)}; statuses {dict(load.statuses)}; {figures}"
    )


@pytest.mark.faults
def test_a_cluster_losing_a_node_loses_nothing_and_instances_agree(tmp_path: Path) -> None:
    load = Load(AGENTS, seed=13)
    with cluster(3) as nodes:
        urls = [n.url.removeprefix("nats://") for n in nodes]
        query = "?replicas=3&prefix=cluster"
        # each instance connects to a different node first
        store_a = "nats://" + ",".join(urls) + query
        store_b = "nats://" + ",".join(urls[1:] + urls[:1]) + query
        first = start_server(tmp_path, CONFIG, store=store_a, db="a.db")
        second = start_server(tmp_path, CONFIG, store=store_b, db="b.db")
        servers = [first, second]
        try:
            bases = [s.base for s in servers]
            stop, threads = load.start(6, bases)
            try:
                load.wait_acked(150)
                nodes[0].kill()  # the node the first instance is connected to
                killed_at = len(load.acked)
                load.wait_acked(150, timeout=90)  # both keep answering on two nodes
                nodes[0].start()
                nodes[0].wait_meta_leader()
                load.wait_acked(100, timeout=90)
            finally:
                stop.set()
                for thread in threads:
                    thread.join(timeout=30)
            outcome = load.retry_all(bases)
            expected = load.expected()
            _settled(servers, expected.deliberations)
            deadline = time.monotonic() + 30
            while (views := [_view(s) for s in servers])[0] != views[1]:
                assert time.monotonic() < deadline, "the two instances disagree"
                time.sleep(0.2)
        finally:
            for server in servers:
                server.stop()
        figures = _verify(store_a, expected)
    assert outcome["kept"] >= 400
    print(
        f"acked at the kill {killed_at}; retries {dict(outcome)}; statuses "
        f"{dict(load.statuses)}; {figures}"
    )
