"""Helpers of the dashboard tests: the served app, its configuration, screenshots."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Page

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip

# Costs per round: sim_a 0.025, sim_b 0.0345, sim_c 0.00425, sim_d 0.01 (4000 in, 1500 out).
CONFIG = """
orchestrator:
  timeout_s: 5
  scope_rounds: {quick: 1, standard: 2, deep: 4}
agents:
  - name: sim_a
    provider_id: simco
    model_name: sim-7
    description: Audit specialist
    capability_tags: [audit, legal]
    input_price_per_mtok: 2.5
    output_price_per_mtok: 10.0
    backend: {kind: simulated, quality: 7.0, latency_ms: 40}
  - name: sim_b
    provider_id: simco
    model_name: sim-9
    capability_tags: [audit, code]
    input_price_per_mtok: 3.0
    output_price_per_mtok: 15.0
    backend: {kind: simulated, quality: 9.0, latency_ms: 60}
  - name: sim_c
    provider_id: other
    model_name: sim-6
    capability_tags: [code]
    input_price_per_mtok: 0.5
    output_price_per_mtok: 1.5
    backend: {kind: simulated, quality: 6.0, latency_ms: 30}
  - name: sim_d
    provider_id: other
    model_name: sim-8
    capability_tags: [legal]
    input_price_per_mtok: 1.0
    output_price_per_mtok: 4.0
    backend: {kind: simulated, quality: 8.0, latency_ms: 50}
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Server:
    """A running `agentladder serve`: its address and the JSON API calls the tests make."""

    base: str
    process: subprocess.Popen[str]
    log: Path

    def output(self) -> str:
        """What the server printed so far."""
        return self.log.read_text(encoding="utf-8", errors="replace")

    def url(self, path: str) -> str:
        """The absolute URL of ``path``."""
        return self.base + path

    def deliberate(self, agents: list[str], scope: str = "quick", **extra: Any) -> str:
        """Start a deliberation through the API; its id."""
        body = {"user_query": "Which controls matter most?", "agent_names": agents, "scope": scope}
        started = httpx.post(self.url("/deliberation"), json={**body, **extra}, timeout=10)
        assert started.status_code == 202, started.text
        identifier: str = started.json()["deliberation_id"]
        return identifier

    def settled(self, identifier: str) -> dict[str, Any]:
        """Wait until the deliberation's ranking and judgments are applied; its record."""
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            record: dict[str, Any] = httpx.get(self.url(f"/deliberation/{identifier}")).json()
            if record["ranking"]["state"] == record["judgments"]["state"] == "applied":
                return record
            time.sleep(0.05)
        raise AssertionError(f"deliberation {identifier} did not settle: {record}")


def start_server(folder: Path) -> Server:
    """`agentladder serve` with ``CONFIG`` over SQLite in ``folder``, once it is ready."""
    config = folder / "agents.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    port = _free_port()
    log = folder / "server.log"
    with log.open("w", encoding="utf-8") as out:  # a file, not a pipe nobody drains
        process = subprocess.Popen(
            [sys.executable, "-m", "agentladder.cli", "serve", "--config", str(config),
             "--store", f"sqlite:///{folder / 'dashboard.db'}", "--port", str(port)],
            stdout=out, stderr=subprocess.STDOUT, text=True, env=dict(os.environ),
        )  # fmt: skip
    served = Server(f"http://127.0.0.1:{port}", process, log)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(served.url("/readyz"), timeout=1).status_code == 200:
                return served
        except httpx.HTTPError:
            time.sleep(0.05)
    process.kill()
    process.wait()
    raise AssertionError(f"the server did not start: {served.output()[-2000:]}")


def screenshot(page: Page, name: str) -> Path:
    """Save the whole page to ``test-artifacts/dashboard-<name>.png``."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"dashboard-{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
