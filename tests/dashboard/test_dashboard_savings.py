"""The routing page's panel "Does routing pay?" in-process (server-rendered HTML): the
overall row and a row per task type with the figures of ``GET /routing/savings``, a
ratio with no value saying why, the empty window, and the figures kept 30 s."""

from __future__ import annotations

import re
import time
from typing import Any

import httpx
from markupsafe import escape

from agentladder.api.routes.dashboard_routing import SAVINGS_ROWS
from agentladder.domain.routing.savings import NO_PRICES, NOT_JUDGED
from agentladder.domain.routing.spec import Strategy
from agentladder.services.container import Services
from agentladder.services.skill.evidence import judgment_evidence
from agentladder.store.served import ServedRequest
from tests.inprocess import call_app

CONFIG: dict[str, Any] = {"agents": []}


def record(contract: str, agent: str, task_type: str, cost: float, reference_cost: float,
           at: float) -> ServedRequest:  # fmt: skip
    """A routed answer whose reference is ``dear`` (skill 8, sd 0.5)."""
    return ServedRequest(
        contract_id=contract, agent_id=agent, caller="team-a", task_type=task_type, at=at,
        routed=Strategy.CHEAPEST_ABOVE, cost_usd=cost, input_tokens=10, output_tokens=5,
        reference_agent="dear", reference_cost_usd=reference_cost, reference_skill=8.0,
        reference_sd=0.5, quality_floor=7.0,
    )  # fmt: skip


def row(html: str, marker: str) -> str:
    """The table row that ``marker`` opens."""
    found = html[html.index(marker) :]
    return found[: found.index("</tr>")]


def test_the_panel_shows_each_task_types_savings_and_why_a_ratio_is_missing() -> None:
    """audit: three answers by cheap at $0.25 for $1 at dear's prices, two judged 6 and 8
    by feedback (no fit: as given) against dear's 8; code: unjudged (no quality ratio,
    the reason in its title) with a free reference (no cost ratio, the reason); the
    overall row first; then a new answer is seen only after the figures' 30 s."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        now = time.time()
        records = [record(f"gw-a{n}", "cheap", "audit", 0.25, 1.0, now - 60 + n) for n in range(3)]
        records.append(record("gw-c", "cheap", "code", 0.5, 0.0, now - 5))
        await services.store.put_served(records, 86_400)
        for contract, score in (("gw-a0", 6.0), ("gw-a1", 8.0)):
            await services.skill.observe(judgment_evidence(
                "cheap", f"{contract}:feedback", "audit", score, True, now,
                judge="feedback:team-a", deferred=True,
            ))  # fmt: skip
        page = (await client.get("/dashboard/routing")).text
        panel = page[
            page.index('id="savings"') : page.index("</section>", page.index('id="savings"'))
        ]
        assert "Does routing pay?" in panel
        assert "resample the requests (1,000 times)" in panel
        assert "4 routed answers, 2 judged; 0 not routed" in panel
        assert panel.index("data-overall") < panel.index('data-task-type="audit"')
        audit = row(panel, '<tr data-task-type="audit">')
        cells = re.findall(r'<td class="num[^"]*"[^>]*>(.*?)</td>', audit, re.S)
        assert cells[:5] == ["3", "0", "$0.7500", "$3.0000", cells[4]]
        assert cells[4].startswith("0.250 ")  # 0.75 against 3, its interval beside
        assert cells[5] == "2"
        assert cells[6:8] == ["7.00", "8.00"]  # (6 + 8) / 2 against dear's 8
        assert cells[8].startswith("0.875 ")
        code = row(panel, '<tr data-task-type="code">')
        assert f'title="{escape(NO_PRICES)}">—' in code
        assert f'title="{escape(NOT_JUDGED)}">—' in code
        overall = row(panel, "data-overall")
        assert "$1.2500" in overall
        await services.store.put_served([record("gw-late", "dear", "audit", 1.0, 1.0, now)], 86_400)
        kept = (await client.get("/dashboard/routing")).text
        assert "4 routed answers" in kept  # within 30 s: the figures computed before
        services.savings.max_age_s = 0.0
        fresh = (await client.get("/dashboard/routing")).text
        assert "5 routed answers" in fresh

    call_app(CONFIG, body)


def test_an_empty_window_says_what_is_routed_and_the_rows_are_bounded() -> None:
    """No routed answer: a line saying which requests are routed, no table. Then more task
    types than the panel lists: the most routed ones, and how many more the API has."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        empty = (await client.get("/dashboard/routing")).text
        assert "No routed gateway answer in this window" in empty
        assert 'id="savings-table"' not in empty
        services.savings.max_age_s = 0.0
        now = time.time()
        records = [
            record(f"gw-{t}-{n}", "cheap", f"type{t:02d}", 0.1, 0.2, now - 1)
            for t in range(SAVINGS_ROWS + 3) for n in range(1 + (t == 7))
        ]  # fmt: skip
        await services.store.put_served(records, 86_400)
        page = (await client.get("/dashboard/routing")).text
        panel = page[page.index('id="savings"') :]
        listed = re.findall(r'<tr data-task-type="(type\d\d)">', panel)
        assert len(listed) == SAVINGS_ROWS
        assert listed[0] == "type07"  # the most routed first
        assert "3 more task types" in panel

    call_app(CONFIG, body)
