"""`agentladder serve` as a real process on loopback: answers, persists, stops on SIGTERM."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

CONFIG = """
agents:
  - name: sim_a
    backend: {kind: simulated, quality: 7.0}
  - name: sim_b
    backend: {kind: simulated, quality: 9.0}
"""


LOGS: dict[int, Path] = {}  # server pid -> its log file


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def serve(config: Path, db: Path, port: int) -> subprocess.Popen[str]:
    """Start the server; its log goes to a file beside the database (a pipe nobody reads
    would fill up and block the server)."""
    log = db.with_suffix(".log").open("a", encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "agentladder.cli", "serve", "--config", str(config),
         "--store", f"sqlite:///{db}", "--port", str(port)],
        stdout=log, stderr=subprocess.STDOUT, text=True, env=dict(os.environ),
    )  # fmt: skip
    log.close()
    LOGS[process.pid] = db.with_suffix(".log")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    process.wait()
    raise AssertionError(f"server did not start: {db.with_suffix('.log').read_text()[-2000:]}")


def stop(process: subprocess.Popen[str]) -> str:
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=30)
    output = LOGS.pop(process.pid).read_text(encoding="utf-8")
    # uvicorn shuts down gracefully, then re-raises the signal it was stopped by
    assert process.returncode in (0, -signal.SIGTERM), output[-2000:]
    assert "Application shutdown complete." in output
    return output


def test_serve_answers_persists_and_restarts(tmp_path: Path) -> None:
    """A judgment and a deliberation over real HTTP survive a restart of the server."""
    config = tmp_path / "agents.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    db = tmp_path / "served.db"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    process = serve(config, db, port)
    try:
        judged = httpx.post(
            f"{base}/oracle/judgments",
            json={"agent_id": "sim_a", "contract_id": "c-1", "score": 9.5},
            timeout=10,
        )
        assert judged.status_code == 200, judged.text
        started = httpx.post(
            f"{base}/deliberation",
            json={"user_query": "q", "agent_names": ["sim_a", "sim_b"], "scope": "quick"},
            timeout=10,
        )
        assert started.status_code == 202, started.text
        identifier = started.json()["deliberation_id"]
        for _ in range(100):
            record = httpx.get(f"{base}/deliberation/{identifier}", timeout=10).json()
            if record["ranking"]["state"] == "applied":
                break
            time.sleep(0.05)
        assert record["ranking"]["promoted"] == ["sim_b"]
    finally:
        output = stop(process)
    assert "no API tokens configured" in output
    process = serve(config, db, port)
    try:
        profile = httpx.get(f"{base}/oracle/profiles/sim_a", timeout=10).json()
        assert profile["stats"]["total_tasks"] >= 1
        agents = {a["name"]: a for a in httpx.get(f"{base}/agents", timeout=10).json()["agents"]}
        assert agents["sim_b"]["stats"]["rank"] == 1
    finally:
        stop(process)
