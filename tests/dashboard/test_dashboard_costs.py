"""What a deliberation cost, where a user looks: the API, the lists, the agent page, the CLI."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from agentladder.api import render
from agentladder.services.container import Services
from tests.inprocess import call_app

AGENTS: dict[str, Any] = {
    "agents": [
        {"name": "sim_a", "input_price_per_mtok": 2.5, "output_price_per_mtok": 10.0,
         "backend": {"kind": "simulated", "quality": 7.0}},
        {"name": "sim_b", "input_price_per_mtok": 0.5, "output_price_per_mtok": 1.5,
         "backend": {"kind": "simulated", "quality": 9.0}},
    ]
}  # fmt: skip
QUERY = "Which clause of the lease is the riskiest?"


async def deliberate(client: httpx.AsyncClient, services: Services) -> dict[str, Any]:
    """One settled deliberation of sim_a and sim_b; its record as the API shows it."""
    started = await client.post(
        "/deliberation", json={"user_query": QUERY, "agent_names": ["sim_a", "sim_b"]}
    )
    assert started.status_code == 202
    await services.orchestrator.settle()
    record = await client.get(f"/deliberation/{started.json()['deliberation_id']}")
    body: dict[str, Any] = record.json()
    return body


def money(value: float) -> str:
    """Dollars as the dashboard writes them: two significant digits below a cent."""
    return render.money(value)


def test_the_api_shows_each_deliberations_total_and_each_agents_spend() -> None:
    """GET /deliberation/{id} and GET /deliberations carry total_cost and agent_costs; the
    totals add up, each agent's spend is its proposals and its evaluations, and its Oracle
    profile's total_cost_incurred is that spend."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        record = await deliberate(client, services)
        assert record["cost_basis"] == 2
        spent: dict[str, float] = {"sim_a": 0.0, "sim_b": 0.0}
        for round_ in record["rounds"]:
            for proposal in round_["proposals"]:
                spent[proposal["agent_id"]] += proposal["cost"]
                for evaluation in proposal["evaluations"]:
                    spent[evaluation["evaluator"]] += evaluation["cost"]
        assert all(value > 0 for value in spent.values())
        assert record["agent_costs"] == pytest.approx(spent)
        assert record["total_cost"] == pytest.approx(sum(spent.values()))
        listed = (await client.get("/deliberations")).json()["deliberations"][0]
        assert listed["total_cost"] == pytest.approx(record["total_cost"])
        assert listed["agent_costs"] == pytest.approx(spent)
        for agent, value in spent.items():
            profile = (await client.get(f"/oracle/profiles/{agent}")).json()
            assert profile["stats"]["total_cost_incurred"] == pytest.approx(value)

    call_app(AGENTS, body)


def test_the_dashboard_shows_query_agents_cost_and_each_agents_deliberations() -> None:
    """The deliberations list shows the question, the agents and the cost; the
    deliberation page its total and each agent's spend; an agent page lists the agent's
    deliberations with its spend and its total_cost_incurred."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        record = await deliberate(client, services)
        listing = (await client.get("/dashboard/deliberations")).text
        row = re.search(r'<tr data-deliberation="[^"]+">(.*?)</tr>', listing, re.S)
        assert row is not None
        assert QUERY in row.group(1)
        assert "sim_a, sim_b" in row.group(1)
        assert money(record["total_cost"]) in row.group(1)
        page = (await client.get(f"/dashboard/deliberations/{record['id']}")).text
        assert f'<strong id="total-spent">{money(record["total_cost"])}</strong>' in page
        for agent in ("sim_a", "sim_b"):
            assert money(record["agent_costs"][agent]) in page
            agent_page = (await client.get(f"/dashboard/agents/{agent}")).text
            mine = re.search(r'<table class="data" id="agent-deliberations">(.*?)</table>',
                             agent_page, re.S)  # fmt: skip
            assert mine is not None
            assert f'data-deliberation="{record["id"]}"' in mine.group(1)
            assert QUERY in mine.group(1)
            assert money(record["agent_costs"][agent]) in mine.group(1)
            incurred = f'<strong id="total-cost-incurred">{money(record["agent_costs"][agent])}'
            assert incurred in agent_page

    call_app(AGENTS, body)
