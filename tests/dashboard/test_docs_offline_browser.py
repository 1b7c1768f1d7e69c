"""``/docs`` renders in Chromium with every request off this machine blocked."""

from __future__ import annotations

from urllib.parse import urlsplit

from playwright.sync_api import BrowserContext, Page, Route, expect

from tests.dashboard.served import Server, screenshot


def test_swagger_ui_renders_the_api_without_the_internet(shared_server: Server, page: Page) -> None:
    """Any request to a host other than the server is aborted (and fails the test); the
    Swagger UI still shows the API's operations."""
    here = urlsplit(shared_server.url("/")).netloc
    outside: list[str] = []

    def gate(route: Route) -> None:
        if urlsplit(route.request.url).netloc == here or route.request.url.startswith("data:"):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", gate)
    page.goto(shared_server.url("/docs"))
    expect(page.locator(".opblock").first).to_be_visible(timeout=10_000)
    expect(
        page.locator(".opblock-summary-path", has_text="/deliberation/{deliberation_id}")
    ).to_have_count(1)
    screenshot(page, "docs")
    assert outside == []


LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"


def test_redoc_renders_under_its_policy_and_loads_nothing_from_outside(
    shared_server: Server, browser: BrowserContext
) -> None:
    """``/redoc`` shows the API's operations with its Content-Security-Policy in force; the
    one thing the policy refuses is ReDoc's own logo from cdn.redoc.ly (before the policy,
    the page fetched it from the internet), so no request leaves this machine and no other
    error is logged."""
    here = urlsplit(shared_server.url("/")).netloc
    outside: list[str] = []
    errors: list[str] = []
    tab = browser.new_page()
    tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: errors.append(f"page error: {e}"))

    def gate(route: Route) -> None:
        url = route.request.url
        if urlsplit(url).netloc == here or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            outside.append(url)
            route.abort()

    tab.route("**/*", gate)
    try:
        answer = tab.goto(shared_server.url("/redoc"))
        assert answer is not None
        assert "content-security-policy" in answer.headers
        expect(tab.get_by_text("/deliberation/{deliberation_id}").first).to_be_attached(
            timeout=15_000
        )
        screenshot(tab, "redoc")
    finally:
        tab.close()
    assert outside == []
    assert [e for e in errors if LOGO not in e] == []
