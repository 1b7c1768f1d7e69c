"""Who to use's panel "Does routing pay?" in a real Chromium against `agentladder serve`
with a gateway in front of a local provider: routed answers through the gateway, one
judged by feedback, then the panel read from the page, wide and on a phone."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.dashboard.served import screenshot
from tests.gateway.provider import Providers
from tests.served import Server, free_port, seed_scores, start_server

TOKEN = "team-a-token-0123456789"
ORCH = "orchestrator-token-0123456789"
ASK = [{"role": "user", "content": "Which controls matter most?"}]


def config(base_url: str) -> str:
    """cheap at a tenth of dear's prices, both answering; no fit during the test."""

    def agent(name: str, price: float) -> str:
        return f"""
  - name: {name}
    input_price_per_mtok: {price}
    output_price_per_mtok: {2 * price}
    backend: {{kind: openai, base_url: "{base_url}", model: "good:{name}",
               api_key_env: GW_KEY_SAVINGS}}"""

    return f"""
api:
  tokens:
    - {{role: client, token: {TOKEN}, name: team-a}}
    - {{role: orchestrator, token: {ORCH}}}
skill:
  fit_interval_s: 3600
agents:{agent("cheap", 1.0)}{agent("dear", 10.0)}
"""


@pytest.fixture
def gateway(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    """The provider and `agentladder serve`, dear judged above cheap at audit; both
    stopped by pid."""
    monkeypatch.setenv("GW_KEY_SAVINGS", "sk-savings-secret")
    providers = Providers(tmp_path, free_port())
    try:
        server = start_server(tmp_path, config(providers.base_url))
        try:
            seed_scores(server, {"dear": 9.0, "cheap": 8.0}, ORCH)
            yield server
        finally:
            server.stop()
    finally:
        providers.stop()


def ask(server: Server, headers: dict[str, str]) -> str:
    """One request to ``route:audit``; its contract."""
    answer = httpx.post(
        server.url("/v1/chat/completions"), json={"model": "route:audit", "messages": ASK},
        headers={"Authorization": f"Bearer {TOKEN}", **headers}, timeout=30,
    )  # fmt: skip
    assert answer.status_code == 200, answer.text
    return answer.headers["x-agentladder-contract"]


def test_the_routing_page_shows_whether_routing_paid(gateway: Server, page: Page) -> None:
    """Three cheapest_above answers by cheap (one rated 8) and one best answer by dear:
    the panel's overall and audit rows show 4 routed, 1 by the reference, the cost ratio
    (3 x 0.000025 + 0.00025) / (4 x 0.00025) = 0.325 and one judged answer; at 390 px the
    table scrolls inside its box."""
    floor = {"x-agentladder-quality-floor": "6"}
    contracts = [ask(gateway, floor) for _ in range(3)]
    ask(gateway, {})
    rated = httpx.post(
        gateway.url("/v1/feedback"), json={"contract_id": contracts[0], "score": 8},
        headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10,
    )  # fmt: skip
    assert rated.status_code == 200, rated.text
    deadline = time.monotonic() + 20  # the records are written once a second
    while httpx.get(gateway.url("/routing/savings"), timeout=30).json()["routed"] < 4:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    page.goto(gateway.url("/dashboard"))
    page.click("header nav >> text=Who to use")
    panel = page.locator("#savings")
    expect(panel.locator("h2")).to_have_text("Does routing pay?")
    expect(page.locator("#savings-summary")).to_contain_text("4 routed answers, 1 judged")
    audit = panel.locator('tr[data-task-type="audit"] td')
    expect(audit.nth(0)).to_have_text("audit")
    expect(audit.nth(1)).to_have_text("4")
    expect(audit.nth(2)).to_have_text("1")
    expect(audit.nth(5)).to_contain_text("0.325")
    expect(audit.nth(6)).to_have_text("1")
    expect(panel.locator("tr[data-overall] td").nth(0)).to_have_text("Overall")
    screenshot(page, "routing-savings")
    page.set_viewport_size({"width": 390, "height": 844})
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= 390, wide
    box = page.locator("#savings .scroll")
    assert box.evaluate("e => e.scrollWidth > e.clientWidth")  # scrolls in its own box
    screenshot(page, "routing-savings-phone")
