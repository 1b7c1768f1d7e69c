"""The Traffic page in a real Chromium against `agentladder serve` with a gateway in front
of a local provider: requests, fallbacks, clients against their budgets (the checks'
counters: ``test_dashboard_traffic_checks.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.dashboard.served import screenshot
from tests.gateway.provider import Providers
from tests.served import Server, free_port, start_server

TEAM_A = "team-a-token-0123456789"
TEAM_B = "team-b-token-0123456789"
ORCH = "orchestrator-token-0123456789"
ADMIN = "admin-token-0123456789"
ASK = [{"role": "user", "content": "Which controls matter most?"}]


def config(base_url: str) -> str:
    """alpha answers ($0.000025 an answer), beta answers 500; team-a may spend $0.000065 a
    day, team-b has no budget."""
    return f"""
api:
  tokens:
    - {{role: client, token: {TEAM_A}, name: team-a, budget: {{limit_usd: 0.000065, period: day}}}}
    - {{role: client, token: {TEAM_B}, name: team-b}}
    - {{role: orchestrator, token: {ORCH}}}
    - {{role: admin, token: {ADMIN}}}
agents:
  - name: alpha
    input_price_per_mtok: 1.0
    output_price_per_mtok: 2.0
    backend: {{kind: openai, base_url: "{base_url}", model: "good:alpha",
               api_key_env: GW_KEY_ALPHA}}
  - name: beta
    backend: {{kind: openai, base_url: "{base_url}", model: "fail:beta",
               api_key_env: GW_KEY_ALPHA}}
"""


@pytest.fixture
def gateway(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    """The provider and `agentladder serve`, beta judged above alpha at audit (so that
    ``route:audit`` tries beta first); both stopped by pid."""
    monkeypatch.setenv("GW_KEY_ALPHA", "sk-alpha-secret")
    providers = Providers(tmp_path, free_port())
    try:
        server = start_server(tmp_path, config(providers.base_url))
        try:
            judgments = [
                {"agent_id": agent, "contract_id": f"seed-{agent}-{i}", "task_type": "audit",
                 "score": score}
                for agent, score in (("beta", 9.8), ("alpha", 8.2)) for i in range(12)
            ]  # fmt: skip
            posted = httpx.post(
                server.url("/oracle/judgments/batch"), json={"judgments": judgments},
                headers={"Authorization": f"Bearer {ORCH}"}, timeout=30,
            )  # fmt: skip
            assert posted.status_code == 200, posted.text
            yield server
        finally:
            server.stop()
    finally:
        providers.stop()


def ask(server: Server, token: str, model: str) -> int:
    """One request (``max_tokens`` 1: its hold, about $0.00001, is below what alpha's
    answer costs, so a client can end over its budget); its status."""
    answer = httpx.post(
        server.url("/v1/chat/completions"), json={"model": model, "messages": ASK, "max_tokens": 1},
        headers={"Authorization": f"Bearer {token}"}, timeout=30,
    )  # fmt: skip
    return answer.status_code


def test_traffic_page_shows_requests_fallbacks_and_clients(gateway: Server, page: Page) -> None:
    """From the nav: alpha's requests by task type (one answered after beta failed: a
    fallback), beta's failed attempt, and to an admin's token team-a over its budget
    (spent, 0 left, the reset) and team-b without one; the page says which figures are
    this instance's."""
    assert ask(gateway, TEAM_A, "alpha") == 200
    assert ask(gateway, TEAM_A, "alpha") == 200
    assert ask(gateway, TEAM_A, "route:audit") == 200  # beta fails, alpha answers
    assert ask(gateway, TEAM_A, "alpha") == 429  # 0.000075 spent of 0.000065
    assert ask(gateway, TEAM_B, "alpha") == 200
    page.set_extra_http_headers({"Authorization": f"Bearer {ADMIN}"})  # clients: admin only
    page.goto(gateway.url("/dashboard"))
    page.click("header nav >> text=Traffic")
    expect(page.locator("h1")).to_have_text("Traffic")
    scope = page.locator("#traffic-scope")
    expect(scope).to_contain_text("this instance's counters since it started")
    expect(scope).to_contain_text("The clients' spend is the store's figure")
    expect(page.locator("#traffic-summary")).to_contain_text(
        "4 answered, 1 after a fallback, 0 checked (0.0%)"
    )
    direct = page.locator('#traffic-requests tr[data-agent="alpha"][data-task-type="general"] td')
    expect(direct.nth(1)).to_have_text("general")  # named none: counted where its feedback lands
    expect(direct.nth(2)).to_have_text("3")  # answered: team-a twice, team-b once
    routed = page.locator('#traffic-requests tr[data-agent="alpha"][data-task-type="audit"] td')
    expect(routed.nth(1)).to_have_text("audit")
    expect(routed.nth(2)).to_have_text("1")
    expect(routed.nth(5)).to_have_text("1")  # fallbacks
    expect(routed.nth(10)).to_contain_text(" ms / ")
    beta = page.locator('#traffic-trust tr[data-agent="beta"] td')
    expect(beta.nth(5)).to_have_text("1")  # its failed attempt
    expect(page.locator("#traffic-judges")).to_have_text("$0.0000 on checks.")
    team_a = page.locator('#traffic-clients tr[data-client="team-a"]')
    expect(team_a).to_have_class("over-budget")
    cells = team_a.locator("td")
    expect(cells.nth(1)).to_have_text("$0.000065 a day")
    expect(cells.nth(2)).to_have_text("$0.000075")
    expect(cells.nth(3)).to_have_text("$0.0000")
    expect(cells.nth(4)).to_have_text("115.4%")
    expect(cells.nth(5)).to_contain_text("00:00:00 UTC")
    team_b = page.locator('#traffic-clients tr[data-client="team-b"] td')
    expect(team_b.nth(1)).to_have_text("none")
    expect(team_b.nth(6)).to_have_text("$0.000025")  # today
    screenshot(page, "traffic")
