"""`agentladder serve` as a real process on loopback: answers, persists, stops on SIGTERM."""

from __future__ import annotations

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
