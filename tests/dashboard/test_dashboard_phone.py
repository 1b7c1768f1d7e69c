"""Every page on a phone: Chromium at 390 px wide over a store with a week of a team's data,
no sideways scrolling, and a navigation that stays readable."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any, get_type_hints
from urllib.parse import quote

import httpx
import pytest
from fastapi.responses import HTMLResponse
from fastapi.routing import APIRoute
from playwright.sync_api import Page, sync_playwright

from agentladder.api.app import create_served_app
from agentladder.config import parse_settings
from tests.dashboard.conftest import console
from tests.dashboard.served import CHROMIUM, CHROMIUM_ARGS, Server, screenshot
from tests.dashboard.week import ADMIN, IMPORTED, JUDGES, REVIEWER, Week, week_server

WIDTH = 390
MIN_CONTRAST = 4.5  # WCAG AA for normal text
# ReDoc's own logo, which the docs pages' policy refuses (test_docs_offline_browser.py)
REDOC_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"

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
    page.on("console", lambda m: None if REDOC_LOGO in m.text else console(problems, m))
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


def _routes(routes: list[Any]) -> Iterator[APIRoute]:
    """Each APIRoute of the app, those of its included routers too."""
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
        included = getattr(route, "original_router", None)  # app.include_router(...)
        if included is not None:
            yield from _routes(included.routes)


def page_templates() -> list[str]:
    """The path of every page the service serves: each GET route that answers HTML (the
    dashboard's, and the API docs'), as the app declares them, so that a page added later
    is checked without naming it here."""
    app = create_served_app(parse_settings(None), "memory://")
    found = []
    for route in _routes(app.routes):
        returns = get_type_hints(route.endpoint).get("return")
        html = route.response_class is HTMLResponse or returns is HTMLResponse
        if "GET" in (route.methods or ()) and html and route.path not in NOT_PAGES:
            found.append(route.path)
    return found


NOT_PAGES = {"/docs/oauth2-redirect": "Swagger UI's OAuth2 callback: a script, no content"}


def expand(template: str, values: dict[str, list[str]]) -> list[str]:
    """The paths of ``template``, one for each value of its parameter."""
    names = re.findall(r"{(\w+)}", template)
    if not names:
        return [template]
    assert len(names) == 1, f"{template}: give this test its parameters' values"
    assert names[0] in values, f"{template}: give this test the values of {names[0]}"
    return [template.replace(f"{{{names[0]}}}", quote(v, safe="")) for v in values[names[0]]]


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Week]:
    """The store a team has after a week (tests/dashboard/week.py), served."""
    with week_server(tmp_path_factory.mktemp("week")) as served:
        yield served


def test_the_pages_are_found_from_the_app_s_routes() -> None:
    """Every dashboard page and both API docs pages are enumerated (the phone test below
    reads this list), with the parameters it knows how to fill."""
    templates = page_templates()
    assert set(templates) >= {
        "/dashboard", "/dashboard/agents/{agent_id}", "/dashboard/deliberations",
        "/dashboard/deliberations/new", "/dashboard/deliberations/{deliberation_id}",
        "/dashboard/routing", "/dashboard/traffic", "/docs", "/redoc",
    }, templates  # fmt: skip
    values = {"agent_id": ["a"], "deliberation_id": ["d"]}
    assert all(expand(template, values) for template in templates)


def _savings_shown(page: Any) -> tuple[int, int]:
    """The routed and judged answers the routing page's summary says, once it shows them
    all (the page computes its savings at most every 30 s, so an early figure may lag)."""
    deadline = time.monotonic() + 45
    while True:
        shown = re.search(r"(\d+) routed answers?, (\d+) judged", page("/dashboard/routing"))
        assert shown is not None
        counts = (int(shown[1]), int(shown[2]))
        if (counts[0] >= 4 and counts[1] >= 1) or time.monotonic() > deadline:
            return counts
        time.sleep(1)


def test_the_week_holds_what_a_team_s_store_holds(week: Week) -> None:
    """The store the phone test measures is full: probation in several streams, imported
    agents, both outcomes of a deliberation, checked gateway answers and a fallback,
    routing savings, the named judges."""
    admin = {"Authorization": f"Bearer {ADMIN}"}

    def page(path: str) -> str:
        answer = httpx.get(week.server.url(path), headers=admin, timeout=30)
        assert answer.status_code == 200, (path, answer.status_code)
        return answer.text

    reviewer = page(f"/dashboard/agents/{quote(REVIEWER, safe='')}")
    probation = reviewer[reviewer.index('id="probation-table"') :]
    assert probation[: probation.index("</table>")].count("<tr data-task-type=") == 4
    assert set(IMPORTED) <= set(week.agents)
    listed = page("/dashboard/deliberations")
    assert 'class="state failed"' in listed
    assert 'class="state completed"' in listed
    summary = re.search(r"(\d+) after a fallback, (\d+) checked", page("/dashboard/traffic"))
    assert summary is not None
    assert int(summary[1]) >= 1
    assert int(summary[2]) >= 1
    routed, judged = _savings_shown(page)
    assert routed == 4
    assert judged >= 1  # the checks are sampled: one to three of the answers are judged
    index = page("/dashboard")
    for judge in JUDGES:
        assert f'data-source="judge:{judge}"' in index, judge


def test_every_page_fits_a_phone_with_a_week_of_data(week: Week, tab: Page) -> None:
    """At 390 px, over a store with a week of a team's data (long agent ids and task types,
    probation, imported history, gateway traffic and checks, deliberations completed and
    failed, routing savings, judges, a fit): every page the app serves, each agent's and
    each deliberation's included, never scrolls sideways (scrollWidth <= 390), and each
    dashboard page's navigation links lie inside the header with a contrast of at least
    4.5:1. Every page is measured before the test fails, so one run names them all."""
    tab.set_extra_http_headers({"Authorization": f"Bearer {ADMIN}"})  # the clients too
    values = {"agent_id": week.agents, "deliberation_id": week.deliberations}
    paths = [path for template in page_templates() for path in expand(template, values)]
    assert len(paths) == 7 + len(week.agents) + len(week.deliberations), paths
    wide: dict[str, int] = {}
    for number, path in enumerate(paths):
        tab.goto(week.server.url(path))
        tab.wait_for_load_state("networkidle")
        width = tab.evaluate("document.scrollingElement.scrollWidth")
        if width > WIDTH:
            wide[path] = width
        screenshot(tab, f"phone-week-{number:02d}")
        if not path.startswith("/dashboard"):
            continue
        links = tab.evaluate(CONTRAST_JS)
        assert len(links) == 6, links  # the name, then five pages
        for link in links:
            assert link["inHeader"], (path, link)
            assert link["right"] <= WIDTH, (path, link)
            assert link["contrast"] >= MIN_CONTRAST, (path, link)
    assert wide == {}, f"wider than {WIDTH} px: {wide}"


def test_board_titles_show_the_task_type_as_written(server: Server, tab: Page) -> None:
    """The leaderboard and skill board of task type code_review are titled code_review
    as rendered (innerText, after CSS), not Code_review."""
    deliberation(server)
    tab.goto(server.url("/dashboard"))
    for board in ('[data-board="code_review"] h2', '[data-skill-board="code_review"] h2'):
        assert tab.locator(board).inner_text() == "code_review", board
    assert tab.locator('[data-board="overall"] h2').inner_text() == "Overall"
