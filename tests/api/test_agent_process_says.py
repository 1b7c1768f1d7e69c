"""`agentladder agent` says when it starts, connects (its first heartbeat accepted) and
stops: a real server and a real agent process over HTTP on loopback."""

from __future__ import annotations

import time
from pathlib import Path

from tests.served import start_agents, start_server, stop_agents

TOKEN = "far-a-token-0123456789"
CONFIG = f"""
orchestrator:
  heartbeat_interval_s: 0.5
api:
  tokens:
    - {{role: agent, token: {TOKEN}, agent_id: far_a}}
agents:
  - name: far_a
    remote: true
    backend: {{kind: simulated, quality: 6.5}}
"""


def test_the_agent_process_says_it_starts_connects_and_stops(tmp_path: Path) -> None:
    """Its output: starting (backend, server, concurrency), then connected once the server
    accepted its heartbeat, then stopped (SIGTERM), in that order, each once."""
    server = start_server(tmp_path, CONFIG)
    try:
        agents = start_agents(
            tmp_path, ["far_a"], ["--server", server.base, "--concurrency", "2"],
            {"far_a": {"AGENTLADDER_TOKEN": TOKEN}},
        )  # fmt: skip
        log = tmp_path / "agents.log"
        deadline = time.monotonic() + 30
        while "connected" not in log.read_text(encoding="utf-8"):
            assert time.monotonic() < deadline, log.read_text(encoding="utf-8")
            time.sleep(0.05)
        time.sleep(1.2)  # two more heartbeats: "connected" is said once
        stop_agents(tmp_path, agents)
    finally:
        server.stop()
    said = [line for line in log.read_text(encoding="utf-8").splitlines() if "far_a" in line]
    assert said == [
        f"agent far_a starting: simulated backend, joining {server.base} (2 tasks at once)",
        f"agent far_a connected to {server.base}: heartbeat accepted, answering its tasks",
        "agent far_a stopped (SIGTERM)",
    ]
