"""The picker's refusals in a real Chromium against a real `agentladder serve`: a field
the API refuses is told in the form's words and marked; a 401 or 403 points at the token
field, with the server's message saying which (no token, a token matching none, a role
that may not)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.dashboard.served import CONFIG, Server, screenshot
from tests.served import start_server

ORCH = "picker-orchestrator-token-0123456789"
CLIENT = "picker-client-token-0123456789"
TOKENS = f"""
api:
  tokens:
    - {{role: orchestrator, token: {ORCH}}}
    - {{role: client, token: {CLIENT}, name: team}}
"""


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[Server]:
    """The dashboard's served configuration with an orchestrator and a client token."""
    served = start_server(tmp_path, CONFIG + TOKENS, db="guarded.db")
    try:
        yield served
    finally:
        served.stop()


def start(page: Page, agents: list[str], token: str | None = None) -> None:
    """Tick ``agents``, ask a question, give ``token`` and start."""
    for agent in agents:
        page.check(f"#pick-{agent}")
    page.fill("#user-query", "which is best?")
    if token is not None:
        page.fill("#token", token)
    page.click("#start")


def test_one_agent_is_told_in_the_forms_words(
    server: Server, page: Page, problems: list[str]
) -> None:
    """One agent ticked: "choose at least 2 agents (1 chosen)", not pydantic's tuple, and
    the table marked; a later refusal of another kind unmarks it."""
    page.goto(server.url("/dashboard/deliberations/new"))
    start(page, ["sim_a"])
    error = page.locator("#picker-error")
    expect(error).to_have_text(
        "the agents ticked in the table: choose at least 2 agents (1 chosen) (HTTP 422)"
    )
    expect(error).not_to_contain_text("Tuple")
    expect(page.locator("#picker-table")).to_have_attribute("aria-invalid", "true")
    screenshot(page, "picker-one-agent")
    page.fill("#route-floor", "11")
    page.select_option("#route-strategy", "cheapest_above")
    page.click("#auto-select")
    expect(error).to_have_text("Quality floor: must be at most 10 (HTTP 422)")
    expect(page.locator("#route-floor")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#picker-table")).not_to_have_attribute("aria-invalid", "true")
    assert problems == [
        f"HTTP 422 {server.url('/deliberation')}",
        f"HTTP 422 {server.url('/route')}",
    ]
    problems.clear()


def test_a_401_or_403_points_at_the_token_field(
    guarded: Server, page: Page, problems: list[str]
) -> None:
    """No token, a token matching none, a client's token: each message says which, and
    points at the token field, which is marked and focused."""
    page.goto(guarded.url("/dashboard/deliberations/new"))
    error = page.locator("#picker-error")
    start(page, ["sim_a", "sim_b"])
    expect(error).to_have_text(
        "API token: POST /deliberation needs a bearer token (role orchestrator or admin);"
        " send 'Authorization: Bearer <token>' (HTTP 401)"
    )
    expect(page.locator("#token")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#token")).to_be_focused()
    page.fill("#token", "picker-wrong-token-0123456789")
    page.click("#start")
    expect(error).to_have_text("API token: the bearer token matches no configured token (HTTP 401)")
    page.fill("#token", CLIENT)
    page.click("#start")
    expect(error).to_have_text(
        "API token: POST /deliberation needs role orchestrator or admin; this token's role"
        " is client (HTTP 403)"
    )
    screenshot(page, "picker-forbidden")
    page.fill("#token", ORCH)
    page.click("#start")
    expect(page.locator("#follow")).to_be_visible()
    expect(page.locator("#token")).not_to_have_attribute("aria-invalid", "true")
    url = guarded.url("/deliberation")
    assert problems == [f"HTTP 401 {url}", f"HTTP 401 {url}", f"HTTP 403 {url}"]
    problems.clear()
