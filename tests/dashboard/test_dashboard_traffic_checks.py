"""The Traffic page in-process: the checks' counters and the judges' spend, as the checks
record them in ``GatewayTotals``."""

from __future__ import annotations

from typing import Any

import httpx

from agentladder.services.container import Services
from tests.inprocess import call_app


def test_traffic_page_shows_checks_and_judge_spend() -> None:
    """The checks' counters (by agent, task type and outcome) and the judges' spend, as the
    checks record them in ``GatewayTotals``: the share checked, trust gained and lost."""
    settings: dict[str, Any] = {"agents": [{"name": "sim", "backend": {"kind": "simulated"}}]}

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        totals = services.gateway.totals
        totals.requests["alpha", "audit", "answered"] = 8
        for outcome, count in (("started", 4), ("passed", 3), ("failed", 1)):
            totals.checks["alpha", "audit", outcome] = count
        totals.checks["beta", "audit", "started"] = 1
        totals.checks["beta", "audit", "error"] = 1
        totals.judge_cost_usd["judge-a"] = 0.0123
        totals.judge_cost_usd["judge-b"] = 0.5
        html = (await client.get("/dashboard/traffic")).text
        assert "8 answered, 0 after a fallback, 5 checked (62.5%)" in html
        assert "4 (50.0%)" in html  # alpha at audit: 4 of its 8 answers checked
        assert "$0.5123 on checks: judge-a $0.0123, judge-b $0.5000." in html
        trust = html[html.index('id="traffic-trust"') :]
        row = trust[trust.index('<tr data-agent="alpha"') :]
        alpha = row[: row.index("</tr>")]
        cells = [part.split("</td>")[0] for part in alpha.split('class="num">')[1:]]
        assert cells == ["4", "3", "1", "0", "0"]
        assert "No client token with a name is configured" in html

    call_app(settings, body)
