"""`agentladder serve --store nats://...` with two `agentladder agent` processes: the
agents register by heartbeats over NATS, show online in the API, deliberate through it,
and are ranked; all real processes on loopback."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import httpx

from agentladder.natsserver import NatsServer
from tests.served import start_agents, start_server, stop_agents
from tests.services.test_remote_agents import CONFIG


def test_serve_on_nats_with_agent_processes(
    session_nats_server: NatsServer, tmp_path: Path
) -> None:
    prefix = f"s{uuid.uuid4().hex[:8]}"
    url = f"{session_nats_server.url}?prefix={prefix}"
    server = start_server(tmp_path, CONFIG, store=url)
    agents = start_agents(
        tmp_path, ["far_a", "far_b"], ["--server", session_nats_server.url, "--prefix", prefix]
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            listed = httpx.get(server.url("/agents"), timeout=10).json()["agents"]
            status = {a["name"]: a["status"] for a in listed}
            if status == {"far_a": "online", "far_b": "online"}:
                break
            assert time.monotonic() < deadline, status
            time.sleep(0.1)
        assert all(a["remote"] for a in listed)
        record = server.settled(server.deliberate(["far_a", "far_b"]))
        assert record["status"] == "completed"
        assert record["result"]["agent_id"] == "far_b"
        ranked = {a["name"]: a["stats"] for a in httpx.get(server.url("/agents")).json()["agents"]}
        assert (ranked["far_a"]["rank"], ranked["far_b"]["rank"]) == (0, 1)
        profile = httpx.get(server.url("/oracle/profiles/far_b"), timeout=10).json()
        assert profile["stats"]["total_tasks"] == 1
    finally:
        try:
            stop_agents(tmp_path, agents)
        finally:
            server.stop()
