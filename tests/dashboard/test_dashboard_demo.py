"""The dashboard after `make demo`: `agentladder serve --demo`, its picker, in Chromium."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from agentladder.demo import DEMO_AGENTS
from tests.dashboard.served import screenshot
from tests.served import Server, start_serve

LIVE_MS = 15000  # two polls of 2 s plus a standard deliberation of three agents, with room


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """`agentladder demo` (four deliberations), then `serve --demo --db` on its file,
    stopped by its pid (processes: Playwright's sync API holds this thread's event loop).
    One for the module: neither test depends on what the other did (the index's note is
    read against the table it stands over)."""
    tmp_path = tmp_path_factory.mktemp("demo")
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


def test_the_demo_s_index_says_what_rank_and_xp_mean(demo_server: Server, page: Page) -> None:
    """The index explains, above the agent table, that rank is floor-based and never goes
    down, with the range of ranks the table shows, that XP is positive-only (how many
    agents have 500 XP or more), and to compare agents by skill."""
    page.goto(demo_server.url("/dashboard"))
    ranks = page.locator('#agent-rows td[data-col="rank"]')
    expect(ranks).to_have_count(len(DEMO_AGENTS))
    values = [int(text) for text in ranks.all_inner_texts()]
    xps = [int(text) for text in page.locator('#agent-rows td[data-col="xp"]').all_inner_texts()]
    note = page.locator("#ladder-note")
    expect(note).to_be_visible()
    expect(note).to_contain_text("floor-based promotion")
    expect(note).to_contain_text("rank never goes down")
    expect(note).to_contain_text(f"here ranks {min(values)} to {max(values)}")
    climbed = sum(xp >= 500 for xp in xps)
    expect(note).to_contain_text(f"({climbed} of {len(DEMO_AGENTS)} agents here have 500 XP")
    expect(note).to_contain_text("positive-only")
    expect(note).to_contain_text("To compare agents, read Skill")
