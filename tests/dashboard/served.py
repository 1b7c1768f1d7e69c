"""Helpers of the dashboard tests: the served app, its configuration, screenshots."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page

from tests.served import Server
from tests.served import start_server as start_shared

__all__ = [
    "ARTIFACTS",
    "CHROMIUM",
    "CHROMIUM_ARGS",
    "CONFIG",
    "ROOT",
    "Server",
    "screenshot",
    "start_server",
]

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


def start_server(folder: Path) -> Server:
    """`agentladder serve` with ``CONFIG`` over SQLite in ``folder``, once it is ready."""
    return start_shared(folder, CONFIG, db="dashboard.db")


def screenshot(page: Page, name: str) -> Path:
    """Save the whole page to ``test-artifacts/dashboard-<name>.png``."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"dashboard-{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
