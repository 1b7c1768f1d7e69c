"""`agentladder serve --store nats://...` with two `agentladder agent` processes: the
agents register by heartbeats over NATS, show online in the API, deliberate through it,
and are ranked; all real processes on loopback."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx

from agentladder.natsserver import NatsServer
from tests.served import start_server

CONFIG = """
orchestrator:
  heartbeat_interval_s: 0.5
agents:
  - name: far_a
    provider_id: simulated
    remote: true
    backend: {kind: simulated, quality: 6.5}
  - name: far_b
    provider_id: simulated
    remote: true
    backend: {kind: simulated, quality: 8.5}
"""


def test_serve_on_nats_with_agent_processes(
    session_nats_server: NatsServer, tmp_path: Path
) -> None:
    prefix = f"s{uuid.uuid4().hex[:8]}"
    url = f"{session_nats_server.url}?prefix={prefix}"
    server = start_server(tmp_path, CONFIG, store=url)
    log = (tmp_path / "agents.log").open("w", encoding="utf-8")
    config = str(tmp_path / "agents.yaml")
    command = [sys.executable, "-m", "agentladder.cli", "agent", "--config", config]
    nats_args = ["--server", session_nats_server.url, "--prefix", prefix]
    agents = [
        subprocess.Popen(
            [*command, "--name", name, *nats_args], stdout=log, stderr=subprocess.STDOUT
        )
        for name in ("far_a", "far_b")
    ]
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
        for process in agents:
            process.send_signal(signal.SIGTERM)
        codes = [process.wait(timeout=20) for process in agents]
        log.close()
        server.stop()
    assert codes == [0, 0], (tmp_path / "agents.log").read_text(encoding="utf-8")[-2000:]
