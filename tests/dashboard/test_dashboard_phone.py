"""Every dashboard page on a phone: Chromium at 390 px wide, no sideways scrolling, and a
navigation that stays readable."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, sync_playwright

from tests.dashboard.conftest import console
from tests.dashboard.served import CHROMIUM, CHROMIUM_ARGS, Server, screenshot

WIDTH = 390
MIN_CONTRAST = 4.5  # WCAG AA for normal text

CONTRAST_JS = """
() => {
  const rgb = (text) => (text.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const c = [r, g, b].map((v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  const backdrop = (el) => {
    for (let node = el; node; node = node.parentElement) {
      const c = rgb(getComputedStyle(node).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0)) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  return [...document.querySelectorAll("header.top a")].map((a) => {
    const box = a.getBoundingClientRect();
    const fg = lum(rgb(getComputedStyle(a).color)), bg = lum(backdrop(a));
    // the box must lie over the header's own background, not past it
    const header = a.closest("header").getBoundingClientRect();
    return {text: a.textContent.trim(), left: box.left, right: box.right, top: box.top,
            bottom: box.bottom, inHeader: box.left >= header.left && box.right <= header.right
            && box.top >= header.top && box.bottom <= header.bottom,
            contrast: (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05)};
  });
}
"""


@pytest.fixture(scope="module")
def phone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Headless Debian Chromium with a phone-sized viewport (390 x 844), new profile."""
    profile = tmp_path_factory.mktemp("chromium-phone")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": WIDTH, "height": 844}, device_scale_factor=1,
        )  # fmt: skip
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def tab(phone: Any) -> Iterator[Page]:
    """A new tab; a JavaScript error, console error or failed request fails the test."""
    problems: list[str] = []
    page: Page = phone.new_page()
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("console", lambda message: console(problems, message))
    page.on(
        "response",
        lambda r: problems.append(f"HTTP {r.status} {r.url}") if r.status >= 400 else None,
    )
    yield page
    page.close()
    assert problems == []


def deliberation(server: Server) -> str:
    """A finished deliberation with a long question and a task type, for the pages."""
    query = "Rank the findings of the quarterly audit by risk " * 6
    request = {"user_query": query, "agent_names": ["sim_a", "sim_b", "sim_c", "sim_d"],
               "scope": "standard", "task_type": "code_review"}  # fmt: skip
    started = httpx.post(server.url("/deliberation"), json=request, timeout=10)
    assert started.status_code == 202, started.text
    found = started.json()["deliberation_id"]
    for _ in range(300):  # 30 s at most
        record = httpx.get(server.url(f"/deliberation/{found}"), timeout=10).json()
        if record["judgments"]["state"] == "applied":
            return str(found)
        time.sleep(0.1)
    raise AssertionError(f"deliberation {found} did not settle")


def test_every_page_fits_a_phone_and_keeps_its_navigation_readable(
    server: Server, tab: Page, tmp_path: Path
) -> None:
    """At 390 px: the document never scrolls sideways (scrollWidth <= 390), and each
    navigation link lies inside the header with a contrast of at least 4.5:1."""
    found = deliberation(server)
    pages = {
        "index": "/dashboard",
        "agent": "/dashboard/agents/sim_a",
        "deliberations": "/dashboard/deliberations",
        "deliberation": f"/dashboard/deliberations/{found}",
        "picker": "/dashboard/deliberations/new",
        "routing": "/dashboard/routing",
        "traffic": "/dashboard/traffic",
    }
    for name, path in pages.items():
        tab.goto(server.url(path))
        tab.wait_for_load_state("networkidle")
        width = tab.evaluate("document.scrollingElement.scrollWidth")
        screenshot(tab, f"phone-{name}")
        assert width <= WIDTH, f"{path}: the page is {width} px wide"
        links = tab.evaluate(CONTRAST_JS)
        assert len(links) == 6, links  # the name, then five pages
        for link in links:
            assert link["inHeader"], (path, link)
            assert link["right"] <= WIDTH, (path, link)
            assert link["contrast"] >= MIN_CONTRAST, (path, link)


def test_board_titles_show_the_task_type_as_written(server: Server, tab: Page) -> None:
    """The leaderboard and skill board of task type code_review are titled code_review
    as rendered (innerText, after CSS), not Code_review."""
    deliberation(server)
    tab.goto(server.url("/dashboard"))
    for board in ('[data-board="code_review"] h2', '[data-skill-board="code_review"] h2'):
        assert tab.locator(board).inner_text() == "code_review", board
    assert tab.locator('[data-board="overall"] h2').inner_text() == "Overall"
