"""The agent page's charts in Chromium: the skill chart's x axis is the order of the
updates, so imported history from a year ago does not squeeze today's evidence against the
right edge; every chart's times read as the tables write them, UTC."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Any

import httpx
from playwright.sync_api import Page

from tests.dashboard.served import Server, screenshot

TICK = re.compile(r"^\d{4}-\d\d-\d\d\n\d\d:\d\d:\d\d$")
STAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$")


def judge(server: Server, judgments: list[dict[str, Any]]) -> None:
    """Post ``judgments`` as one batch."""
    posted = httpx.post(
        server.url("/oracle/judgments/batch"), json={"judgments": judgments}, timeout=30
    )
    assert posted.status_code == 200, posted.text


def chart(page: Page, box: str) -> dict[str, Any]:
    """A drawn chart's x values, their pixels and the x axis's tick labels."""
    found: dict[str, Any] = page.locator(box).evaluate(
        """(box) => {
             const u = box.uplot;
             return { xs: u.data[0], pixels: u.data[0].map((x) => u.valToPos(x, "x")),
                      ticks: u.axes[0]._values, width: u.bbox.width / devicePixelRatio };
           }"""
    )
    return found


def test_imported_history_leaves_room_for_today_and_times_read_as_in_the_tables(
    server: Server, page: Page
) -> None:
    """sim_a: 20 judgments imported from a year ago (history, placed by the next fit),
    then 4 today. On the skill chart the 4 newest updates are as far apart as any two
    (on a time axis they would be within a pixel of the right edge); every tick of the
    skill and XP charts is a table stamp's date over its time, and the legend's time is a
    table stamp."""
    old = datetime.now(UTC) - timedelta(days=365)
    judge(server, [
        {"agent_id": "sim_a", "contract_id": f"old-{i}", "task_type": "audit", "score": 6.0,
         "history": True, "observed_at": (old + timedelta(days=i)).isoformat()}
        for i in range(20)
    ])  # fmt: skip
    assert httpx.get(server.url("/skills?fresh=true"), timeout=60).status_code == 200
    judge(server, [
        {"agent_id": "sim_a", "contract_id": f"new-{i}", "task_type": "audit", "score": 9.0}
        for i in range(4)
    ])  # fmt: skip
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(server.url("/dashboard/agents/sim_a"))
    page.wait_for_function("document.getElementById('skill-chart').uplot !== undefined")
    skill = chart(page, "#skill-chart")
    xs, pixels = skill["xs"], skill["pixels"]
    assert xs == list(range(len(xs))), xs
    assert len(xs) >= 21, xs
    gaps = [b - a for a, b in pairwise(pixels)]
    assert min(gaps[-3:]) >= 0.9 * max(gaps), gaps  # today's updates as wide as any
    assert min(gaps[-3:]) > 5, gaps
    labels = [t for t in skill["ticks"] if t]
    assert labels, skill["ticks"]
    assert all(TICK.match(t) for t in labels), labels
    assert labels[0][:4] < labels[-1][:4], labels  # a year of history, then today
    xp = chart(page, "#xp-chart")
    assert xp["ticks"], xp
    assert all(TICK.match(t) for t in xp["ticks"] if t), xp["ticks"]
    page.locator("#skill-chart .u-over").hover(position={"x": 5, "y": 20})
    page.locator("#skill-chart .u-over").hover()
    legend = page.locator("#skill-chart .u-legend .u-series").first
    shown = legend.locator(".u-value").inner_text()
    assert STAMP.match(shown), shown
    screenshot(page, "agent-skill-imported")
