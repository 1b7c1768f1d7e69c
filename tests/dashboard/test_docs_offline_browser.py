"""``/docs`` renders in Chromium with every request off this machine blocked."""

from __future__ import annotations

from urllib.parse import urlsplit

from playwright.sync_api import Page, Route, expect

from tests.dashboard.served import Server, screenshot


def test_swagger_ui_renders_the_api_without_the_internet(server: Server, page: Page) -> None:
    """Any request to a host other than the server is aborted (and fails the test); the
    Swagger UI still shows the API's operations."""
    here = urlsplit(server.url("/")).netloc
    outside: list[str] = []

    def gate(route: Route) -> None:
        if urlsplit(route.request.url).netloc == here or route.request.url.startswith("data:"):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", gate)
    page.goto(server.url("/docs"))
    expect(page.locator(".opblock").first).to_be_visible(timeout=10_000)
    expect(
        page.locator(".opblock-summary-path", has_text="/deliberation/{deliberation_id}")
    ).to_have_count(1)
    screenshot(page, "docs")
    assert outside == []
