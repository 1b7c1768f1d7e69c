"""Who to use stars only an agent that can be used at the task type: evidence there and a
way to call it now (a backend the server asks, or a heartbeat), not down."""

from __future__ import annotations

import re
from typing import Any

import httpx

from agentladder.api.routes.dashboard_routing import contender
from agentladder.domain.routing.health import HealthStatus
from agentladder.services.clock import FixedClock
from agentladder.services.container import Services
from agentladder.services.oracle.models import JudgmentRequest
from tests.inprocess import call_app

AGENTS: dict[str, Any] = {
    "agents": [
        {"name": "sim_a", "backend": {"kind": "simulated"},
         "input_price_per_mtok": 2.0, "output_price_per_mtok": 4.0},
        {"name": "sim_b", "backend": {"kind": "simulated"},
         "input_price_per_mtok": 1.0, "output_price_per_mtok": 2.0},
    ]
}  # fmt: skip


def sections(html: str) -> dict[str, dict[str, str]]:
    """Each section (task type, '' overall): agent -> its Frontier cell's text."""
    found: dict[str, dict[str, str]] = {}
    for task_type, body in re.findall(
        r'<section class="routing" data-task-type="([^"]*)">(.*?)</section>', html, re.S
    ):
        cells = {}
        for agent, row in re.findall(r'<tr data-agent="([^"]+)"[^>]*>(.*?)</tr>', body, re.S):
            last = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)[-1]
            cells[agent] = re.sub(r"<[^>]+>", "", last).strip()
        found[task_type] = cells
    return found


def test_contender_needs_evidence_a_way_to_call_and_health() -> None:
    """The rule, alone: each condition missing says why."""
    assert contender(3, True, HealthStatus.OK) == ""
    assert contender(3, True, HealthStatus.DEGRADED) == ""
    assert contender(0, True, HealthStatus.OK) == "no evidence here"
    assert contender(3, False, HealthStatus.OK).startswith("cannot be called")
    assert contender(3, True, HealthStatus.DOWN) == "down"


def test_an_offline_agent_without_evidence_or_price_is_starred_nowhere() -> None:
    """``ghost`` heartbeated once with no prices (cost $0, the cheapest) and went offline:
    no star at any task type nor overall; judged at ``code`` it has evidence there but
    cannot be called (offline, no backend). ``newbie`` heartbeats now, free, with no
    evidence: no star. ``worker`` heartbeats now with evidence at audit: starred there
    (a heartbeat is a way to call it). sim_a and sim_b, asked by the server itself and
    judged at audit, are on the frontier as their prices and evidence say."""
    clock = FixedClock()

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        beat = {"name": "ghost", "model_name": "m", "provider_id": "p"}
        assert (await client.post("/agents/heartbeat", json=beat)).status_code == 200
        clock.advance(3600)  # ghost is offline
        for name in ("newbie", "worker"):
            beat = {"name": name, "model_name": "m", "provider_id": "p"}
            assert (await client.post("/agents/heartbeat", json=beat)).status_code == 200
        judged = (("sim_a", "audit", 9.0), ("sim_b", "audit", 6.0), ("worker", "audit", 8.0),
                  ("ghost", "code", 9.5), ("sim_a", "code", 5.0))  # fmt: skip
        for agent, task_type, score in judged:
            for i in range(4):
                await services.oracle.submit_for_judgment(
                    JudgmentRequest(agent_id=agent, contract_id=f"{agent}-{task_type}-{i}",
                                    task_type=task_type, score=score)
                )  # fmt: skip
        await services.skill.fit()
        page = await client.get("/dashboard/routing")
        assert page.status_code == 200
        found = sections(page.text)
        assert set(found) == {"audit", "code", ""}
        for task_type, cells in found.items():
            assert "★" not in cells["ghost"], task_type
            assert "★" not in cells["newbie"], task_type
        assert found["audit"]["ghost"] == "no evidence here"
        assert found["audit"]["newbie"] == "no evidence here"
        assert found["code"]["ghost"].startswith("cannot be called: offline")
        assert found["audit"]["worker"] == "★"
        assert found["audit"]["sim_b"] == ""  # could be starred: worker is free and better
        assert found["audit"]["sim_a"] == "★"  # the best at audit, whatever it costs
        assert found["code"]["sim_a"] == "★"  # the only one there that can be called

    call_app(AGENTS, body, clock=clock, seed=None)
