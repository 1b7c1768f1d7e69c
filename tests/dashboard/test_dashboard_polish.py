"""The dashboard's rough edges, in Chromium at 1280 and 390 px against a real served
instance: forest plots fitted and labelled, phones, one time format, the picker's costs,
dashes for missing scores, ranks that refresh."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import httpx
import pytest
from playwright.sync_api import Page, expect

from agentladder.api.render import money
from tests.dashboard.served import Server, screenshot

LIVE_MS = 8000  # two polls of 2 s plus a deliberation, with room
WIDTHS = [1280, 390]
MIN_FONT_PX = 11.0  # the smallest text a forest plot may draw, as rendered
MAX_EMPTY_PX = 24.0  # the most a round's cell may stand taller than what it holds

FOREST_JS = """
(board) => {
  const svg = document.querySelector(`[data-skill-board="${board}"] svg.forest`);
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  const px = (el) => parseFloat(getComputedStyle(el).fontSize) * scale;
  const rows = [...svg.querySelectorAll(".skill-row")];
  return {
    ticks: [...svg.querySelectorAll("text.axis")].map((t) => Number(t.textContent)),
    lows: rows.map((r) => Number(r.dataset.low)), highs: rows.map((r) => Number(r.dataset.high)),
    low: Number(svg.dataset.low), high: Number(svg.dataset.high),
    fonts: [...svg.querySelectorAll("text")].map(px),
  };
}
"""

EMPTY_CELLS_JS = """
() => [...document.querySelectorAll("table.round tbody td")].map((td) => {
  const range = document.createRange();
  range.selectNodeContents(td);
  const content = range.getBoundingClientRect().height;
  const cell = td.getBoundingClientRect().height;
  return {cell: cell, content: content, text: td.innerText.slice(0, 30)};
})
"""


def settle_some(server: Server, count: int = 3) -> dict[str, object]:
    """``count`` settled deliberations of the four agents; the last record."""
    record: dict[str, object] = {}
    for _ in range(count):
        record = server.settled(server.deliberate(["sim_a", "sim_b", "sim_c", "sim_d"]))
    return record


@pytest.mark.parametrize("width", WIDTHS)
def test_forest_plots_are_fitted_readable_and_have_a_legend(
    shared_server: Server, page: Page, width: int
) -> None:
    """Each forest plot's axis spans its intervals with at most a point and a quarter to
    spare (or three points), not 0-10; every label is drawn at 11 px or more; a legend
    names the tiers and the provisional mark in the plots' own colours."""
    settle_some(shared_server)
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(shared_server.url("/dashboard"))
    for board in ("overall", "deliberation"):
        found = page.evaluate(FOREST_JS, board)
        low, high = min(found["lows"]), max(found["highs"])
        assert found["low"] <= low, found
        assert found["high"] >= high, found
        assert found["high"] - found["low"] <= max(3.0, high - low + 2.5), found
        assert found["ticks"][0] >= found["low"], found
        assert found["ticks"][-1] <= found["high"], found
        assert min(found["fonts"]) >= MIN_FONT_PX, (width, found["fonts"])
    legend = page.locator("#forest-legend [data-legend]")
    expect(legend).to_have_count(5)
    for i in range(5):
        expect(legend.nth(i)).to_be_visible()
    expect(page.locator('[data-legend="provisional"]')).to_contain_text("provisional")
    colour = "el => getComputedStyle(el).fill"
    tier1 = page.locator("svg.forest .skill-row.tier-1 .point").first.evaluate(colour)
    assert page.locator('[data-legend="tier-1"] .point').evaluate(colour) == tier1
    screenshot(page, f"forest-{width}")


def test_a_phone_shows_rounds_without_tall_empty_rows_and_cues_wide_tables(
    shared_server: Server, page: Page
) -> None:
    """At 390 px no cell of a deliberation's rounds stands more than 24 px taller than its
    content; the agent table, wider than the screen, says it scrolls (and, scrolled to its
    end, that the first columns are back to the left) and keeps the agent's name in view;
    at 1280 px a table that fits carries no cue."""
    record = settle_some(shared_server, 1)
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(shared_server.url(f"/dashboard/deliberations/{record['id']}"))
    cells = page.evaluate(EMPTY_CELLS_JS)
    assert cells
    tall = [c for c in cells if c["cell"] - c["content"] > MAX_EMPTY_PX]
    assert tall == [], tall
    screenshot(page, "phone-rounds")

    page.goto(shared_server.url("/dashboard"))
    box = page.locator("#agent-table").locator("xpath=..")
    cue = box.locator("xpath=preceding-sibling::p[1]")
    expect(cue).to_be_visible()
    expect(cue).to_have_text("scroll sideways for more columns →")
    box.evaluate("b => b.scrollTo({left: b.scrollWidth})")
    expect(cue).to_have_text("← scroll back for the first columns")
    name = page.locator('#agent-rows tr[data-agent="sim_a"] td[data-col="name"]')
    box_left = box.evaluate("b => b.getBoundingClientRect().left")
    name_box = name.bounding_box()
    assert name_box is not None
    assert abs(name_box["x"] - box_left) <= 2, (name_box, box_left)

    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(shared_server.url(f"/dashboard/deliberations/{record['id']}"))
    scores = page.locator("#scores").locator("xpath=..")
    expect(scores.locator("xpath=preceding-sibling::p[1]")).to_be_hidden()


def test_every_time_is_utc_and_says_so(shared_server: Server, page: Page) -> None:
    """In a browser set to Kathmandu (UTC+5:45), the lists' times, the live status and
    the XP chart's time (its legend under the cursor) are UTC and labelled UTC."""
    record = settle_some(shared_server, 1)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Emulation.setTimezoneOverride", {"timezoneId": "Asia/Kathmandu"})
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(shared_server.url("/dashboard/deliberations"))
    created = page.locator(f'tr[data-deliberation="{record["id"]}"] td').first
    at = datetime.fromtimestamp(float(str(record["created_at"])), UTC)
    expect(created).to_have_text(f"{at:%Y-%m-%d %H:%M:%S} UTC")
    expect(page.locator("#live-status")).to_have_text(
        re.compile(r"^live · updated \d\d:\d\d:\d\d UTC$"), timeout=LIVE_MS
    )
    now = datetime.now(UTC)
    shown = page.locator("#live-status").inner_text()[-12:-4]
    assert abs(int(shown[:2]) - now.hour) in (0, 1, 23), (shown, now)  # not 5:45 ahead

    page.goto(shared_server.url("/dashboard/agents/sim_b"))
    times = json.loads(page.locator("#xp-data").text_content() or "[[]]")[0]
    stamps = {f"{datetime.fromtimestamp(t, UTC):%Y-%m-%d %H:%M:%S} UTC" for t in times}
    chart = page.locator("#xp-chart .u-over")
    chart.hover(position={"x": 5, "y": 20})
    chart.hover()
    legend = page.locator("#xp-chart .u-legend .u-series").first
    expect(legend).to_contain_text("time (UTC)")
    value = legend.locator(".u-value").inner_text()
    assert value in stamps, (value, stamps)


def test_the_picker_explains_its_estimate_and_shows_tiny_costs(server: Server, page: Page) -> None:
    """The picker says how the estimate is made (4,000 input and 1,500 output tokens per
    agent per round); an agent costing $0.00035 a round shows as that, not $0.0004 (in its
    row and in the estimate); after a run, what was spent in the end is beside it."""
    beat = {"name": "tiny", "provider_id": "local", "capability_tags": ["cheap"],
            "input_price_per_mtok": 0.05, "output_price_per_mtok": 0.1}  # fmt: skip
    assert httpx.post(server.url("/agents/heartbeat"), json=beat).status_code == 200
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(server.url("/dashboard/deliberations/new"))
    expect(page.locator("#cost-basis")).to_contain_text("4,000 input and 1,500 output tokens")
    expect(page.locator('#picker-rows tr[data-agent="tiny"] td').last).to_have_text("$0.00035")
    page.select_option("#scope", "quick")
    page.check("#pick-tiny")
    expect(page.locator("#total-cost")).to_have_text("$0.00035")
    page.uncheck("#pick-tiny")
    page.check("#pick-sim_c")
    page.check("#pick-sim_d")
    page.fill("#user-query", "Which is cheapest?")
    page.click("#start")
    expect(page.locator("#follow[data-settled]")).to_have_count(1, timeout=LIVE_MS)
    link = page.locator("#follow-link").text_content() or ""
    spent = httpx.get(server.url(f"/deliberation/{link}")).json()["total_cost"]
    expect(page.locator("#spent")).to_have_text(f"· spent in the end {money(spent)}")
    screenshot(page, "picker-costs")


def test_ranks_refresh_in_the_picker_and_on_the_agent_page(server: Server, page: Page) -> None:
    """With the picker open and agents ticked, a promotion shows in its Rank column and
    the ticks stay; the agent page's Rank card follows too, without a reload."""
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(server.url("/dashboard/deliberations/new"))
    page.evaluate("window.sameDocument = true")
    page.check("#pick-sim_a")
    page.check("#pick-sim_b")
    rank = page.locator('#picker-rows tr[data-agent="sim_b"] td.num').first
    expect(rank).to_have_text("0")
    server.settled(server.deliberate(["sim_a", "sim_b", "sim_c"]))
    expect(rank).to_have_text("1", timeout=LIVE_MS)
    expect(page.locator("#pick-sim_a")).to_be_checked()
    expect(page.locator("#pick-sim_b")).to_be_checked()
    expect(page.locator("#chosen-count")).to_have_text("2")
    assert page.evaluate("window.sameDocument") is True

    page.goto(server.url("/dashboard/agents/sim_a"))
    expect(page.locator("#agent-rank")).to_have_text("0")
    server.settled(server.deliberate(["sim_a", "sim_b"]))  # sim_a alone at the floor: up
    expect(page.locator("#agent-rank")).to_have_text("1", timeout=LIVE_MS)


def test_an_agent_judged_without_scores_shows_a_dash(server: Server, page: Page) -> None:
    """An agent whose judgments carried no score shows "—" as its average score in the
    leaderboards and its specializations, not 0.00."""
    for i in range(2):
        judged = httpx.post(
            server.url("/oracle/judgments"),
            json={"agent_id": "sim_c", "contract_id": f"c-{i}", "task_type": "audit"},
        )
        assert judged.status_code == 200, judged.text
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(server.url("/dashboard"))
    for board in ("overall", "audit"):
        cell = page.locator(f'[data-board="{board}"] tr[data-agent="sim_c"] td').last
        expect(cell).to_have_text("—")
    page.goto(server.url("/dashboard/agents/sim_c"))
    row = page.locator("#specializations tbody tr").first
    expect(row.locator("td").nth(4)).to_have_text("—")
    expect(row.locator("td").nth(5)).to_have_text("—")
