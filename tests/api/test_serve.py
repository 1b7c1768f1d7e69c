"""`agentladder serve` as a real process on loopback: answers, persists, stops on SIGTERM."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx

from tests.served import free_port, start_server

CONFIG = """
agents:
  - name: sim_a
    backend: {kind: simulated, quality: 7.0}
  - name: sim_b
    backend: {kind: simulated, quality: 9.0}
"""


def test_serve_answers_persists_and_restarts(tmp_path: Path) -> None:
    """A judgment and a deliberation over real HTTP survive a restart of the server."""
    port = free_port()
    server = start_server(tmp_path, CONFIG, port=port)
    try:
        judged = httpx.post(
            server.url("/oracle/judgments"),
            json={"agent_id": "sim_a", "contract_id": "c-1", "score": 9.5},
            timeout=10,
        )
        assert judged.status_code == 200, judged.text
        identifier = server.deliberate(["sim_a", "sim_b"])
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            record = httpx.get(server.url(f"/deliberation/{identifier}"), timeout=10).json()
            if record["ranking"]["state"] == "applied":
                break
            time.sleep(0.05)
        assert record["ranking"]["promoted"] == ["sim_b"]
    finally:
        output = server.stop()
    assert "no API tokens configured" in output
    server = start_server(tmp_path, CONFIG, port=port)
    try:
        profile = httpx.get(server.url("/oracle/profiles/sim_a"), timeout=10).json()
        assert profile["stats"]["total_tasks"] >= 1
        listed = httpx.get(server.url("/agents"), timeout=10).json()["agents"]
        agents = {a["name"]: a for a in listed}
        assert agents["sim_b"]["stats"]["rank"] == 1
    finally:
        server.stop()


def test_a_request_still_running_does_not_hold_the_stop_past_the_grace(tmp_path: Path) -> None:
    """An agent's long poll of 30 s is in flight at SIGTERM: the server cancels it after
    ``api.shutdown_grace_s`` (1 s here) and shuts down cleanly, instead of waiting for it."""
    config = """
api: {shutdown_grace_s: 1}
agents:
  - name: far
    remote: true
    backend: {kind: simulated, quality: 7.0}
  - name: near
    backend: {kind: simulated, quality: 5.0}
"""
    server = start_server(tmp_path, config)
    outcome: list[object] = []

    def poll() -> None:
        try:
            outcome.append(
                httpx.get(
                    server.url("/agents/tasks/next"),
                    params={"agent_id": "far", "wait_s": 30},
                    timeout=60,
                ).status_code
            )
        except httpx.HTTPError as error:  # the connection closed without an answer
            outcome.append(error)

    polling = threading.Thread(target=poll)
    polling.start()
    time.sleep(1)  # the poll reaches the idle server and waits for a task (no sign of it)
    output = server.stop()  # SIGTERM; asserts a clean exit and the shutdown completed
    polling.join(timeout=60)
    assert "timeout graceful shutdown exceeded" in output  # the grace ended, the poll cut
    assert len(outcome) == 1
    assert outcome != [204]  # cut short: no "no task within 30 s" answer, so not waited for


def test_serve_freezes_its_start_up_heap_and_shows_the_collector(tmp_path: Path) -> None:
    """Once started, `serve` has moved its start-up heap out of the collector's sight
    (tens of thousands of objects that full collections no longer walk, so they pause the
    event loop less), and /metrics shows the frozen count and the collections by
    generation."""
    server = start_server(tmp_path, CONFIG)
    try:
        judged = httpx.post(
            server.url("/oracle/judgments"),
            json={"agent_id": "sim_a", "contract_id": "c-1", "score": 8.0},
            timeout=10,
        )
        assert judged.status_code == 200, judged.text
        text = httpx.get(server.url("/metrics"), timeout=10).text
    finally:
        server.stop()
    values = {
        line.split(" ")[0]: float(line.split(" ")[1])
        for line in text.splitlines()
        if line and not line.startswith("#")
    }
    assert values["agentladder_gc_frozen_objects"] > 20_000
    assert 'python_gc_collections_total{generation="2"}' in values
