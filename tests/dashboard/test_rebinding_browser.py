"""DNS rebinding as the issue found it, in a real headless Chromium against a real
`agentladder serve`: a page of ``rebind.test`` whose name then resolves to 127.0.0.1
(``--host-resolver-rules``) posts a judgment to the server with the page's own origin.
Before: 200 and XP; now 400 ``host_not_allowed`` and nothing stored.

Chromium's own Private (Local) Network Access check, which refuses a public page's
request to loopback, is switched off here: a rebound page gets around it (a frame of its
own origin, loaded from loopback, makes the request), and the issue's Chromium had none;
what is tested is the server's check."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import BrowserContext, Route, sync_playwright

from tests.dashboard.served import CHROMIUM, CHROMIUM_ARGS, Server

NAME = "rebind.test"
NO_BROWSER_CHECK = (
    "--disable-features=BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights,"
    "PrivateNetworkAccessRespectPreflightResults,LocalNetworkAccessChecks"
)
ATTACK = """<!doctype html><html><body><script>
window.outcome = fetch("/oracle/judgments", {
  method: "POST", headers: {"content-type": "application/json"},
  body: JSON.stringify({agent_id: "sim_a", contract_id: "c-rebound", score: 10}),
}).then(async (r) => ({status: r.status, body: await r.text()}),
        (e) => ({status: 0, body: String(e)}));
</script></body></html>"""


@pytest.fixture(scope="module")
def rebinding(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    """Headless Chromium in which ``rebind.test`` resolves to 127.0.0.1."""
    profile = tmp_path_factory.mktemp("chromium-rebinding")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, headless=True,
            args=[*CHROMIUM_ARGS, f"--host-resolver-rules=MAP {NAME} 127.0.0.1", NO_BROWSER_CHECK],
        )  # fmt: skip
        try:
            yield context
        finally:
            context.close()


def test_a_rebound_page_cannot_write_or_read(server: Server, rebinding: BrowserContext) -> None:
    """The attacker's page (served for its first load, as the attacker's server would) runs
    on http://rebind.test:PORT; its same-origin POST reaches the server on 127.0.0.1 and is
    refused 400 host_not_allowed; the profile keeps 0 XP; the dashboard read under that
    name is refused too, and under 127.0.0.1 it is served."""
    port = server.base.rsplit(":", 1)[1]
    origin = f"http://{NAME}:{port}"
    tab = rebinding.new_page()

    def first_load(route: Route) -> None:
        route.fulfill(status=200, content_type="text/html", body=ATTACK)

    tab.route(f"{origin}/attack", first_load)
    tab.goto(f"{origin}/attack")
    outcome = tab.evaluate("window.outcome")
    assert outcome["status"] == 400, outcome
    assert json.loads(outcome["body"])["error"]["code"] == "host_not_allowed"
    profile = httpx.get(server.url("/oracle/profiles/sim_a"), timeout=10).json()
    assert profile["xp"] == 0
    read = tab.goto(f"{origin}/dashboard")
    assert read is not None
    assert read.status == 400
    own = tab.goto(server.url("/dashboard"))
    assert own is not None
    assert own.status == 200
    tab.close()
