"""The dashboard under test: a real `agentladder serve` process and a real headless Chromium.

The server runs on a free loopback port over a fresh SQLite file with four simulated
agents and is stopped by its pid (SIGTERM). Chromium is Debian's, driven by Playwright,
with a new empty profile; any JavaScript error or failed request fails the test.
Screenshots go to ``test-artifacts/dashboard-*.png``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, ConsoleMessage, Page, Request, sync_playwright

from tests.dashboard.served import CHROMIUM, CHROMIUM_ARGS, Server, start_server


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    """`agentladder serve` on a free port over a fresh SQLite store, stopped by its pid."""
    served = start_server(tmp_path)
    try:
        yield served
    finally:
        served.stop()


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server for a module's tests that need no fresh store (each start costs
    seconds). In a module, either every test on it only reads (no deliberation, judgment or
    heartbeat: each sees the fresh store), or none asserts what depends on the store's
    state before it (each reads only what it added itself, and counts nothing)."""
    served = start_server(tmp_path_factory.mktemp("dashboard"))
    try:
        yield served
    finally:
        served.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    """Headless Debian Chromium with a new empty profile, closed after its module.

    Not for the session: while Playwright's sync API is open, this thread counts as running
    an event loop, and the other suites' ``asyncio.run`` would refuse to start.
    """
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1440, "height": 900},
        )  # fmt: skip
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def problems() -> list[str]:
    """JavaScript errors, console errors and failed requests of the test's page."""
    return []


def console(problems: list[str], message: ConsoleMessage) -> None:
    """Console errors, less the browser's own note on an HTTP error (listed with its URL)."""
    if message.type == "error" and not message.text.startswith("Failed to load resource"):
        problems.append(message.text)


@pytest.fixture
def page(browser: BrowserContext, problems: list[str]) -> Iterator[Page]:
    """A new tab; a JavaScript error, console error or failed request fails the test."""
    tab = browser.new_page()
    tab.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    tab.on("console", lambda message: console(problems, message))
    tab.on(
        "response",
        lambda r: problems.append(f"HTTP {r.status} {r.url}") if r.status >= 400 else None,
    )
    tab.on(
        "requestfailed", lambda r: None if left(r) else problems.append(f"request failed: {r.url}")
    )
    yield tab
    tab.close()
    assert problems == []


def left(request: Request) -> bool:
    """A live refresh the browser itself cancelled as the test left the page: a page polls
    its own URL every 2 s (``static/dashboard.js``), and a click on a link while one is in
    flight aborts it (``net::ERR_ABORTED``); a refresh the server failed fails otherwise."""
    return (
        request.resource_type == "fetch"
        and request.failure == "net::ERR_ABORTED"
        and request.headers.get("accept") == "text/html"
    )
