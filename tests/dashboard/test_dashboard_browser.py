"""The dashboard in a real Chromium against a real `agentladder serve` process."""

from __future__ import annotations

import httpx
from playwright.sync_api import Locator, Page, expect

from agentladder.api.render import money
from tests.dashboard.served import Server, screenshot

LIVE_MS = 8000  # two polls of 2 s plus the deliberation itself, with room to spare


def cell(page: Page, agent: str, column: str) -> Locator:
    """The agent table's cell of ``agent`` in ``column``."""
    return page.locator(f'#agent-rows tr[data-agent="{agent}"] td[data-col="{column}"]')


def visible_agents(page: Page, table: str) -> list[str]:
    """The agents of the visible rows of ``table``, in order."""
    rows = page.locator(f"{table} tbody tr[data-agent]:visible")
    return [rows.nth(i).get_attribute("data-agent") or "" for i in range(rows.count())]


def test_table_shows_every_agent_with_its_columns(shared_server: Server, page: Page) -> None:
    """Each configured agent has a row with provider, model, tags, status, rank, level, cost."""
    page.goto(shared_server.url("/dashboard"))
    expect(page.locator("#agent-rows tr[data-agent]")).to_have_count(4)
    assert visible_agents(page, "#agent-table") == ["sim_a", "sim_b", "sim_c", "sim_d"]
    expected = {"provider": "simco", "model": "sim-9", "tags": "auditcode", "status": "online",
                "rank": "0", "level": "rookie", "xp": "0", "success": "—",
                "cost": "$0.0345"}  # fmt: skip
    for column, text in expected.items():
        expect(cell(page, "sim_b", column)).to_have_text(text)
    expect(page.locator('#leaderboards [data-board="overall"]')).to_contain_text("No judged work")
    screenshot(page, "agents-empty")


def test_table_sorts_and_filters_in_the_browser(shared_server: Server, page: Page) -> None:
    """Headers sort (numbers highest first, again to reverse); tag, status, search filter."""
    page.goto(shared_server.url("/dashboard"))
    page.click('th button[data-sort="cost"]')
    assert visible_agents(page, "#agent-table") == ["sim_b", "sim_a", "sim_d", "sim_c"]
    page.click('th button[data-sort="cost"]')
    assert visible_agents(page, "#agent-table") == ["sim_c", "sim_d", "sim_a", "sim_b"]
    page.select_option("#filter-tag", "legal")
    assert visible_agents(page, "#agent-table") == ["sim_d", "sim_a"]
    page.fill("#filter-text", "other")
    assert visible_agents(page, "#agent-table") == ["sim_d"]
    expect(page.locator("#agent-count")).to_have_text("1 of 4 agents")
    page.select_option("#filter-status", "offline")
    assert visible_agents(page, "#agent-table") == []


def test_rank_award_and_heartbeat_appear_without_reload(server: Server, page: Page) -> None:
    """With the page open, a deliberation run through the API changes ranks, XP, boards live."""
    page.goto(server.url("/dashboard"))
    page.evaluate("window.sameDocument = true")
    page.click('th button[data-sort="rank"]')  # a sort chosen by the user survives refreshes
    expect(cell(page, "sim_b", "rank")).to_have_text("0")

    identifier = server.deliberate(["sim_a", "sim_b", "sim_c"])
    expect(cell(page, "sim_b", "rank")).to_have_text("1", timeout=LIVE_MS)
    assert server.settled(identifier)["ranking"]["promoted"] == ["sim_b"]
    expect(cell(page, "sim_b", "xp")).not_to_have_text("0", timeout=LIVE_MS)
    expect(cell(page, "sim_b", "success")).to_have_text("100.0%")
    assert visible_agents(page, "#agent-table")[0] == "sim_b"
    board = page.locator('#leaderboards [data-board="deliberation"]')
    expect(board.locator('tr[data-agent="sim_b"]')).to_be_visible(timeout=LIVE_MS)

    beat = {"name": "ext_e", "provider_id": "elsewhere", "capability_tags": ["audit"]}
    assert httpx.post(server.url("/agents/heartbeat"), json=beat).status_code == 200
    expect(cell(page, "ext_e", "status")).to_have_text("online", timeout=LIVE_MS)
    assert page.evaluate("window.sameDocument") is True  # never reloaded
    screenshot(page, "agents-live")


def test_agent_page_draws_xp_and_latency_charts(server: Server, page: Page) -> None:
    """The agent page shows stats, specializations, achievements and two drawn charts."""
    for scope in ("quick", "standard"):
        server.settled(server.deliberate(["sim_a", "sim_b", "sim_d"], scope=scope))
    page.goto(server.url("/dashboard/agents/sim_b"))
    expect(page.locator("#agent-rank")).to_have_text("1")  # the 2nd floor was rank 0
    expect(page.locator("#specializations")).to_contain_text("deliberation")
    expect(page.locator("#achievements")).to_contain_text("First Steps")
    for chart, (red, green, blue) in (
        ("#xp-chart", (37, 99, 235)),
        ("#latency-chart", (217, 119, 6)),
    ):
        canvas = page.locator(f"{chart} canvas")
        expect(canvas).to_have_count(1)
        box = canvas.bounding_box()
        assert box is not None
        assert box["width"] > 200, box
        assert box["height"] > 100, box
        stroke = canvas.evaluate(  # pixels in the series' own colour: the line was drawn
            """(c, [r, g, b]) => {
                 const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
                 let n = 0;
                 for (let i = 0; i < d.length; i += 4)
                   if (Math.abs(d[i] - r) + Math.abs(d[i + 1] - g) + Math.abs(d[i + 2] - b) < 40
                       && d[i + 3] > 200) n++;
                 return n;
               }""",
            [red, green, blue],
        )
        assert stroke > 200, f"{chart}: {stroke} pixels of its line"
    expect(page.locator("#latency-chart")).to_contain_text("latency ms")
    screenshot(page, "agent")


def test_picker_starts_a_deliberation_and_follows_it(server: Server, page: Page) -> None:
    """Agents chosen by tag, the scope's cost, POST from the page, rounds shown to the end."""
    page.goto(server.url("/dashboard/deliberations/new"))
    expect(page.locator("#scope option")).to_have_text(
        ["quick (1 round)", "standard (2 rounds)", "deep (4 rounds)"]
    )
    page.select_option("#picker-tag", "audit")
    assert visible_agents(page, "#picker-table") == ["sim_a", "sim_b"]
    page.click("#pick-shown")
    expect(page.locator("#total-cost")).to_have_text(f"${(0.025 + 0.0345) * 2:.4f}")
    page.select_option("#picker-tag", "legal")  # the chosen stay listed
    assert visible_agents(page, "#picker-table") == ["sim_a", "sim_b", "sim_d"]
    page.check("#pick-sim_d")
    page.select_option("#scope", "deep")
    expect(page.locator("#chosen-count")).to_have_text("3")
    expect(page.locator("#total-cost")).to_have_text(f"${(0.025 + 0.0345 + 0.01) * 4:.4f}")

    page.fill("#user-query", "Rank the audit findings by risk.")
    page.fill("#task-type", "audit")
    page.click("#start")
    expect(page.locator("#follow[data-settled]")).to_have_count(1, timeout=LIVE_MS)
    expect(page.locator("#follow-status")).to_have_text("completed")
    expect(page.locator("#follow-rounds .follow-round")).to_have_count(4)
    expect(page.locator("#follow-summary")).to_contain_text("promoted sim_b")
    link = page.locator("#follow-link").text_content() or ""
    record = httpx.get(server.url(f"/deliberation/{link}")).json()
    assert record["total_cost"] > 0
    spent = money(record["total_cost"])
    expect(page.locator("#spent-cost")).to_have_text(spent)  # beside the estimate
    screenshot(page, "picker")

    page.click("#follow-link")
    expect(page.locator("#deliberation-status")).to_have_text("completed")
    expect(page.locator("#total-spent")).to_have_text(spent)
    expect(page.locator("#ranking-state")).to_have_text("applied")
    expect(page.locator("table.round")).to_have_count(4)
    expect(page.locator('table.round[data-round="4"] tr[data-agent="sim_b"]')).to_contain_text(
        "sim_a"  # its evaluators
    )
    screenshot(page, "deliberation")
    page.goto(server.url("/dashboard/deliberations"))
    expect(page.locator("#deliberation-list tbody tr")).to_have_count(1)
    expect(page.locator("#deliberation-list")).to_contain_text("sim_b")


def test_picker_shows_why_a_deliberation_is_refused(
    shared_server: Server, page: Page, problems: list[str]
) -> None:
    """Fewer than two qualified agents: the API's 400 and the excluded agents are shown."""
    page.goto(shared_server.url("/dashboard/deliberations/new"))
    page.check("#pick-sim_a")
    page.check("#pick-sim_b")
    page.fill("#min-rank", "1")
    page.fill("#user-query", "q")
    page.click("#start")
    expect(page.locator("#picker-error")).to_contain_text("HTTP 400")
    expect(page.locator("#picker-error")).to_contain_text("sim_a (rank 0, below_min_rank)")
    expect(page.locator("#follow")).to_be_hidden()
    assert problems == [f"HTTP 400 {shared_server.url('/deliberation')}"]
    problems.clear()


def test_deliberation_page_refreshes_until_settled(server: Server, page: Page) -> None:
    """A deliberation's page opened while it runs shows its rounds and ranking as they come."""
    identifier = server.deliberate(["sim_a", "sim_b", "sim_c", "sim_d"], scope="deep")
    page.goto(server.url(f"/dashboard/deliberations/{identifier}"))
    page.evaluate("window.sameDocument = true")  # opened while running (~0.5 s for 4 rounds)
    expect(page.locator("#ranking-state")).to_have_text("applied", timeout=LIVE_MS)
    expect(page.locator("table.round")).to_have_count(4)
    expect(page.locator("#promoted")).to_have_text("sim_b")
    assert page.evaluate("window.sameDocument") is True
    expect(page.locator("#live-status")).to_have_text("", timeout=LIVE_MS)  # polling stopped


def test_skill_forest_plot_and_the_agent_s_skill_chart(server: Server, page: Page) -> None:
    """After deliberations the dashboard draws each agent's skill with its interval, best
    first, in tiers; the agent page lists its skill per task type and draws its history."""
    for scope in ("standard", "standard"):
        server.settled(server.deliberate(["sim_a", "sim_b", "sim_d"], scope=scope))
    page.goto(server.url("/dashboard"))
    rows = page.locator('[data-skill-board="overall"] .skill-row')
    expect(rows).to_have_count(3)
    order = rows.evaluate_all("rows => rows.map(r => r.dataset.agent)")
    assert order[0] == "sim_b", order
    assert rows.first.get_attribute("data-tier") == "1"
    bar = page.locator('[data-skill-board="overall"] .skill-row .interval').first.bounding_box()
    assert bar is not None
    assert bar["width"] > 2, bar
    expect(page.locator('[data-skill-board="deliberation"]')).to_have_count(1)
    screenshot(page, "skills")
    page.goto(server.url("/dashboard/agents/sim_b"))
    expect(page.locator("#skills-table")).to_contain_text("deliberation")
    canvas = page.locator("#skill-chart canvas")
    expect(canvas).to_have_count(1)
    dark = canvas.evaluate(
        """(c) => {
             const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
             let n = 0;
             for (let i = 0; i < d.length; i += 4)
               if (d[i] < 40 && d[i + 1] < 50 && d[i + 2] < 70 && d[i + 3] > 200) n++;
             return n;
           }"""
    )
    assert dark > 50, f"{dark} pixels of the overall line"
    screenshot(page, "agent-skill")


def test_the_skill_plot_shows_provisional_agents_apart_and_the_overall_it_averages(
    server: Server, page: Page
) -> None:
    """Two agents judged 24 times by a noisy judge (settled) and one judged once at 9.9
    (provisional): the overall plot draws the settled ones in tiers, then, below a heading
    of their own, the provisional one with no tier; the legend says what tier 1 is; the
    agent page says what overall is the mean of."""
    judgments = [
        {"agent_id": agent, "contract_id": f"c-{agent}-{i}", "task_type": "audit",
         "score": score}
        for agent, scores in (("sim_a", (9, 5, 10, 6, 8, 7)), ("sim_b", (1, 5, 3, 0, 4, 6)))
        for i, score in enumerate(scores * 4)
    ]  # fmt: skip
    judgments.append({"agent_id": "sim_c", "contract_id": "c-sim_c", "task_type": "audit",
                      "score": 9.9})  # fmt: skip
    posted = httpx.post(server.url("/oracle/judgments/batch"), json={"judgments": judgments},
                        timeout=30)  # fmt: skip
    assert posted.status_code == 200, posted.text
    page.goto(server.url("/dashboard"))
    board = page.locator('[data-skill-board="overall"]')
    rows = board.locator(".skill-row")
    expect(rows).to_have_count(3)
    found = rows.evaluate_all(
        "rows => rows.map(r => [r.dataset.agent, r.dataset.tier, r.dataset.provisional,"
        " r.getBoundingClientRect().top])"
    )
    assert [row[:3] for row in found] == [
        ["sim_a", "1", "false"], ["sim_b", "2", "false"], ["sim_c", "", "true"]]  # fmt: skip
    heading = board.locator('text[data-group="provisional"]')
    expect(heading).to_have_text("Provisional: too little evidence for a tier")
    top = heading.evaluate("h => h.getBoundingClientRect().top")
    assert found[1][3] < top < found[2][3], (found, top)
    no_tier = board.locator('.skill-row[data-agent="sim_c"] text.tier')
    expect(no_tier).to_have_text("\N{EN DASH}")
    expect(page.locator('[data-legend="tier-1"]')).to_contain_text(
        "tier 1: not separated from the best among settled agents"
    )
    screenshot(page, "skills-provisional")
    page.goto(server.url("/dashboard/agents/sim_a"))
    expect(page.locator("#overall-note")).to_contain_text("the mean of its skill")


def test_picker_auto_selects_with_a_strategy_and_shows_why(
    shared_server: Server, page: Page
) -> None:
    """Auto-select, best, 2 agents tagged audit: routing's picks are checked and listed
    with their reasons, the agents left out with theirs; nothing is started."""
    page.goto(shared_server.url("/dashboard/deliberations/new"))
    page.select_option("#picker-tag", "audit")
    page.fill("#route-count", "2")
    page.select_option("#route-strategy", "best")
    page.click("#auto-select")
    chosen = page.locator("#route-why .route-chosen li")
    expect(chosen).to_have_count(2)
    names = chosen.evaluate_all("items => items.map(i => i.dataset.agent)")
    assert sorted(names) == ["sim_a", "sim_b"]
    expect(chosen.first).to_contain_text("lower bound")
    expect(page.locator("#pick-sim_a")).to_be_checked()
    expect(page.locator("#pick-sim_b")).to_be_checked()
    expect(page.locator("#pick-sim_c")).not_to_be_checked()
    expect(page.locator("#chosen-count")).to_have_text("2")
    left = page.locator('#route-why .route-excluded li[data-agent="sim_c"]')
    expect(left).to_contain_text("tags")
    expect(page.locator("#follow")).to_be_hidden()
    screenshot(page, "picker-auto-select")


def test_picker_takes_a_floor_as_a_share_of_the_best(shared_server: Server, page: Page) -> None:
    """cheapest_above with a floor share and a confidence: the summary names the floor the
    server computed from the best available agent, and each pick its probability."""
    page.goto(shared_server.url("/dashboard/deliberations/new"))
    page.fill("#route-count", "2")
    page.select_option("#route-strategy", "cheapest_above")
    page.fill("#route-floor-share", "0.5")
    page.fill("#route-confidence", "0.6")
    page.click("#auto-select")
    expect(page.locator("#route-why .route-chosen li")).to_have_count(2)
    summary = page.locator("#route-summary")
    expect(summary).to_contain_text("cleared with probability 0.6 (best available: ")
    expect(summary).to_contain_text(", floor ")
    expect(page.locator("#route-why .route-chosen li").first).to_contain_text("P(skill >= ")


def test_who_to_use_draws_skill_against_cost_with_the_frontier(server: Server, page: Page) -> None:
    """After a deliberation of every agent (evidence for each), the routing page draws one
    chart per task type with every agent's interval and marks the frontier (the cheapest
    agent with evidence that can be called is always on it)."""
    server.settled(server.deliberate(["sim_a", "sim_b", "sim_c", "sim_d"], scope="standard"))
    page.goto(server.url("/dashboard/routing"))
    overall = page.locator('section.routing[data-task-type=""]')
    expect(overall.locator("g.point")).to_have_count(4)
    expect(overall.locator('g.point.on-frontier[data-agent="sim_c"]')).to_have_count(1)
    expect(overall.locator('tr.frontier[data-agent="sim_c"]')).to_contain_text("★")
    screenshot(page, "who-to-use")
