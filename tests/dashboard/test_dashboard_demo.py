"""The dashboard after `make demo`: `agentladder serve --demo`, its picker, in Chromium."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from agentladder.demo import DEMO_AGENTS
from tests.dashboard.served import screenshot
from tests.served import Server, start_serve

LIVE_MS = 15000  # two polls of 2 s plus a standard deliberation of three agents, with room


@pytest.fixture
def demo_server(tmp_path: Path) -> Iterator[Server]:
    """`agentladder demo` (four deliberations), then `serve --demo --db` on its file,
    stopped by its pid (processes: Playwright's sync API holds this thread's event loop)."""
    db = tmp_path / "agentladder-demo.db"
    demo = [sys.executable, "-m", "agentladder.cli", "demo", "--db", str(db)]
    demo += ["--deliberations", "4"]
    done = subprocess.run(demo, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    served = start_serve(tmp_path, ["--demo", "--db", str(db)])
    try:
        yield served
    finally:
        served.stop()


def test_the_demo_s_picker_starts_and_follows_a_deliberation(
    demo_server: Server, page: Page
) -> None:
    """Every demo agent is online in the picker; three chosen, the deliberation started
    from the page runs to the end and is followed there."""
    page.goto(demo_server.url("/dashboard/deliberations/new"))
    statuses = page.locator("#picker-table tbody tr .status")
    expect(statuses).to_have_count(len(DEMO_AGENTS))
    expect(statuses).to_have_text(["online"] * len(DEMO_AGENTS))
    for name in ("atlas", "borealis", "harbor"):
        page.check(f"#pick-{name}")
    expect(page.locator("#chosen-count")).to_have_text("3")
    page.fill("#user-query", "Which audit finding matters most?")
    page.fill("#task-type", "audit")
    page.click("#start")
    expect(page.locator("#follow[data-settled]")).to_have_count(1, timeout=LIVE_MS)
    expect(page.locator("#follow-status")).to_have_text("completed")
    expect(page.locator("#follow-rounds .follow-round")).to_have_count(2)  # standard
    screenshot(page, "demo-picker")
