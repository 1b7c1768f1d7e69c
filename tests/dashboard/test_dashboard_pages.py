"""The dashboard's pages in-process (no browser): escaping, 404s, the XP series, packaging."""

from __future__ import annotations

import json
import re
import tempfile
from datetime import UTC, datetime
from importlib import resources
from typing import Any

import httpx

from agentladder.api.routes.dashboard_agent import AGENT_SCAN, xp_series
from agentladder.domain.deliberation import DeliberationRequest
from agentladder.services.clock import FixedClock
from agentladder.services.container import Services
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.store.records import DeliberationDoc
from tests.dashboard.served import ROOT
from tests.inprocess import Body, call_app

AGENTS: dict[str, Any] = {
    "agents": [
        {"name": "sim_a", "backend": {"kind": "simulated", "quality": 7.0}},
        {"name": "sim_b", "backend": {"kind": "simulated", "quality": 9.0}},
    ]
}


def run(body: Body, clock: FixedClock | None = None) -> None:
    """Run ``body(client, services)`` against the app over a fresh memory store."""
    call_app(AGENTS, body, clock=clock, seed=None)


def test_declared_text_is_escaped() -> None:
    """An agent's self-declared description cannot inject markup into the pages."""

    async def body(client: httpx.AsyncClient, _: Services) -> None:
        beat = {"name": "evil", "description": "<script>alert(1)</script>"}
        assert (await client.post("/agents/heartbeat", json=beat)).status_code == 200
        for path in ("/dashboard", "/dashboard/agents/evil", "/dashboard/deliberations/new"):
            page = await client.get(path)
            assert page.status_code == 200, path
            assert "<script>alert(1)" not in page.text
        agent = await client.get("/dashboard/agents/evil")
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in agent.text

    run(body)


def test_unknown_agent_and_deliberation_are_not_found() -> None:
    """An agent never heard of nor judged, and an unknown deliberation, answer 404."""

    async def body(client: httpx.AsyncClient, _: Services) -> None:
        assert (await client.get("/dashboard/agents/nobody")).status_code == 404
        assert (await client.get("/dashboard/deliberations/nothing")).status_code == 404
        assert (await client.get("/dashboard/deliberations")).status_code == 200

    run(body)


def test_xp_series_is_cumulative_by_timestamp() -> None:
    """One point per second of ledger lines, all XP added up; 0 at first seen, the total now."""
    clock = FixedClock(datetime(2026, 3, 1, tzinfo=UTC))
    start = clock.now().timestamp()

    async def body(_: httpx.AsyncClient, services: Services) -> None:
        for contract, score, later in (("c1", 9.5, 0), ("c2", 5.0, 0), ("c3", 8.5, 90)):
            clock.advance(later)
            request = JudgmentRequest(agent_id="sim_a", contract_id=contract, score=score)
            await services.oracle.submit_for_judgment(request)
        xp = (await services.oracle.get_profile("sim_a")).xp
        times, totals = await xp_series(services, "sim_a")
        assert times == [start, start + 90]
        assert totals[-1] == xp
        assert 0 < totals[0] < totals[1]
        life = await xp_series(services, "sim_a", start=start - 30, end=start + 300)
        assert life == [[start - 30, *times, start + 300], [0, *totals, xp]]
        late = await xp_series(services, "sim_a", start=start + 0.5)  # seen after, same second
        assert late == [[start - 1, *times], [0, *totals]]

    run(body, clock)


def test_unjudged_agent_page_has_flat_xp_and_no_latencies() -> None:
    """An agent never judged nor asked: XP 0 from first seen to now, no latency points."""

    async def body(client: httpx.AsyncClient, _: Services) -> None:
        page = await client.get("/dashboard/agents/sim_a")
        assert page.status_code == 200
        found = re.search(r'id="xp-data">(.*?)</script>', page.text)
        assert found is not None
        times, totals = json.loads(found.group(1))
        assert len(times) == 2
        assert totals == [0, 0]
        assert '<script type="application/json" id="latency-data">[[], []]</script>' in page.text

    run(body)


def test_templates_and_the_vendored_chart_library_ship_in_the_package() -> None:
    """Templates, scripts and uPlot with its licence are package data; the docs name its version."""
    api = resources.files("agentladder.api")
    for name in ("base.html", "index.html", "agent.html", "picker.html", "deliberation.html"):
        assert (api / "templates" / name).is_file(), name
    vendor = api / "static" / "vendor" / "uplot"
    assert "MIT License" in (vendor / "LICENSE").read_text(encoding="utf-8")
    header = (vendor / "uPlot.iife.min.js").read_text(encoding="utf-8")[:200]
    version = re.search(r"\(v(\d+\.\d+\.\d+)\)", header)
    assert version is not None
    docs = (ROOT / "docs" / "dashboard.md").read_text(encoding="utf-8")
    assert f"uPlot {version.group(1)}" in docs


def test_static_files_are_served() -> None:
    """/static serves the dashboard's own scripts and the vendored library."""

    async def body(client: httpx.AsyncClient, _: Services) -> None:
        for path in ("dashboard.js", "charts.js", "picker.js", "vendor/uplot/uPlot.iife.min.js"):
            response = await client.get(f"/static/{path}")
            assert response.status_code == 200, path
        assert (await client.get("/static/nothing.js")).status_code == 404

    run(body)


def test_who_to_use_marks_the_frontier_and_health() -> None:
    """After a deliberation, at its task type the better of two equally priced agents is
    on the frontier and the other not; a down agent shows its health and no star; a
    degraded agent on the frontier is starred saying it is degraded; an agent known by
    its evidence alone (imported) is listed, as such, with no price."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        request = DeliberationRequest(
            user_query="q", agent_names=["sim_a", "sim_b"], task_type="audit", scope="standard"
        )
        await services.orchestrator.run(request)
        await services.orchestrator.settle()
        for _ in range(3):
            services.health.record("sim_a", ok=False, error="boom")
        for ok in (True, False, True, False, True):
            services.health.record("sim_b", ok=ok, error=None if ok else "boom")
        await services.oracle.submit_for_judgment(
            JudgmentRequest(agent_id="imported", contract_id="h1", task_type="audit",
                            score=7.0, history=True, new_agent=True)
        )  # fmt: skip
        assert services.skill is not None
        await services.skill.fit()  # as an import ends: history's evidence waits for a fit
        page = await client.get("/dashboard/routing")
        assert page.status_code == 200
        audit = page.text[page.text.index('data-task-type="audit"') :]
        audit = audit[: audit.index("</section>")]
        assert '<tr data-agent="sim_b" class="frontier">' in audit
        assert '<tr data-agent="sim_a">' in audit
        row = audit[audit.index('<tr data-agent="sim_a">') :]
        row = row[: row.index("</tr>")]
        assert '<span class="health down" title="3 failed calls in a row">down</span>' in row
        assert "★" not in row
        best = audit[audit.index('<tr data-agent="sim_b" class="frontier">') :]
        best = best[: best.index("</tr>")]
        assert '★ <span class="health degraded"' in best
        imported = audit[audit.index('<tr data-agent="imported">') :]
        imported = imported[: imported.index("</tr>")]
        assert "known by evidence" in imported
        assert 'title="it declared no prices"' in imported

    run(body)


def test_pages_show_a_page_of_task_types_and_link_the_others() -> None:
    """sim_a judged in 70 task types (more judgments in the first ones): its page lists the
    50 with the most evidence and links ?types=50, which lists the other 20; the index
    shows the boards of 12 task types, links the next 12, and ?types=60 the last 10."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        for n in range(70):
            for repeat in range(1 + (n < 5)):
                request = JudgmentRequest(
                    agent_id="sim_a", contract_id=f"c{n}-{repeat}", task_type=f"type{n:02d}",
                    score=8.0,
                )  # fmt: skip
                await services.oracle.submit_for_judgment(request)
        first = (await client.get("/dashboard/agents/sim_a")).text
        specs = first[first.index('id="specializations"') :]
        rows = re.findall(r"<tr><td>(type\d\d)</td>", specs)
        assert len(rows) == 50
        assert rows[:5] == [f"type{n:02d}" for n in range(5)]  # the most judged first
        assert "Task types 1\u201350 of 70" in first
        assert 'href="?types=50"' in first
        rest = (await client.get("/dashboard/agents/sim_a?types=50")).text
        more = re.findall(r"<tr><td>(type\d\d)</td>", rest[rest.index('id="specializations"') :])
        assert len(more) == 20
        assert not set(more) & set(rows)
        index = (await client.get("/dashboard")).text
        boards = re.findall(r'data-board="(type\d\d)"', index)
        assert len(boards) == 12
        assert 'href="?types=12"' in index
        last = (await client.get("/dashboard?types=60")).text
        assert len(re.findall(r'data-board="(type\d\d)"', last)) == 10
        assert 'href="?types=48"' in last
        assert (await client.get("/dashboard?types=-1")).status_code == 422

    run(body)


def test_the_agent_page_lists_its_own_deliberations_older_than_the_newest_200() -> None:
    """An agent whose last deliberation is older than 200 others (on SQLite) still sees it
    on its page, with its failed-evaluation count: the page asks the store for the
    agent's deliberations instead of filtering the newest 200."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        started = await client.post(
            "/deliberation",
            json={"user_query": "Old question", "agent_names": ["sim_a", "sim_b"]},
        )
        assert started.status_code == 202
        await services.orchestrator.settle()
        old = await services.store.get_deliberation(started.json()["deliberation_id"])
        assert old is not None
        for i in range(AGENT_SCAN):  # newer ones of sim_b alone, as stored records
            newer = {**old.body, "id": f"newer-{i}", "agents": ["sim_b"],
                     "created_at": old.created_at + 1 + i}  # fmt: skip
            doc = DeliberationDoc(id=f"newer-{i}", status=old.status,
                                  created_at=old.created_at + 1 + i, body=newer)  # fmt: skip
            await services.store.put_deliberation(doc)
        page = (await client.get("/dashboard/agents/sim_a")).text
        mine = re.search(r'id="agent-deliberations">(.*?)</table>', page, re.S)
        assert mine is not None
        assert f'data-deliberation="{old.id}"' in mine.group(1)
        assert "Old question" in mine.group(1)
        assert re.search(r'id="evaluation-failures">0 of \d+', page)

    with tempfile.TemporaryDirectory() as folder:
        call_app(AGENTS, body, store=f"sqlite:///{folder}/pages.db", seed=None)
