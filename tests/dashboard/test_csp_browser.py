"""The dashboard's Content-Security-Policy is enforced by a real Chromium: a script
injected into a page (as a stored name carrying markup would be, were it ever rendered
unescaped) does not run, and the browser reports the violation."""

from __future__ import annotations

from playwright.sync_api import BrowserContext

from tests.dashboard.served import Server


def test_an_injected_inline_script_does_not_run(server: Server, browser: BrowserContext) -> None:
    """On /dashboard, an inline <script> added to the document and an inline event handler
    are both refused (a securitypolicyviolation event for each, nothing run), while the
    page's own scripts ran (the agent table is sorted and counted)."""
    tab = browser.new_page()
    try:
        tab.goto(server.url("/dashboard"))
        tab.wait_for_selector("#agent-count:not(:empty)")
        outcome = tab.evaluate(
            """() => new Promise((resolve) => {
              const seen = [];
              document.addEventListener("securitypolicyviolation",
                (e) => seen.push(e.violatedDirective));
              const script = document.createElement("script");
              script.textContent = "window.injected = true";
              document.body.appendChild(script);
              const img = document.createElement("img");
              img.setAttribute("onerror", "window.handler = true");
              img.src = "/static/none.png";
              document.body.appendChild(img);
              setTimeout(() => resolve({seen, injected: window.injected === true,
                                        handler: window.handler === true}), 1000);
            })"""
        )
    finally:
        tab.close()
    assert outcome["injected"] is False, outcome
    assert outcome["handler"] is False, outcome
    assert len(outcome["seen"]) >= 2
    assert all(d.startswith("script-src") for d in outcome["seen"])
