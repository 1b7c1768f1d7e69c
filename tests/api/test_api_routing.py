"""Routing over HTTP: POST /route, POST /deliberation with select, and health cooldowns
(GET /agents/{id}, /metrics, selection), on a fake clock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from agentladder.providers.settings import SimulatedSettings
from agentladder.providers.simulated import SimulatedProvider
from agentladder.services.clock import FixedClock
from agentladder.services.container import Services
from agentladder.services.oracle.verify import verify_store
from tests.api.conftest import CONFIG, ORCH, TOKENS, bearer
from tests.api.test_api_deliberations import wait_done
from tests.inprocess import call_app


def test_route_recommends_without_running_anything(api: Any) -> None:
    """POST /route: the chosen agents with skill, sd, cost, latency and why, the others
    with why not, and the seed; no deliberation is stored; the seed repeats it."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        sent = {"count": 2, "task_type": "audit", "tags": ["audit"], "strategy": "explore"}
        response = await client.post("/route", json=sent, headers=bearer(ORCH))
        assert response.status_code == 200, response.text
        out = response.json()
        assert sorted(p["agent_id"] for p in out["agents"]) == ["sim_a", "sim_c"]
        first = out["agents"][0]
        assert set(first) >= {"agent_id", "skill", "sd", "low", "estimated_cost_per_round",
                              "latency_p90_ms", "reason", "detail"}  # fmt: skip
        assert out["excluded"] == [
            {
                "agent_id": "sim_b",
                "reason": "tags",
                "detail": "does not declare audit",
                "p_floor": None,
            }
        ]
        assert out["estimated_cost_per_round"] == 0.025
        again = await client.post(
            "/route", json={**sent, "seed": out["seed"]}, headers=bearer(ORCH)
        )
        assert again.json() == out
        assert (await client.get("/deliberations")).json()["deliberations"] == []

    api(body)


def test_route_with_too_few_qualifying_agents_is_400_with_the_excluded(api: Any) -> None:
    """Three agents costing at most 0.01 per round asked for, two qualify: 400
    too_few_agents naming sim_a with reason cost."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        response = await client.post(
            "/route", json={"count": 3, "max_cost_per_round": 0.01}, headers=bearer(ORCH)
        )
        assert response.status_code == 400
        error = response.json()["error"]
        assert error["code"] == "too_few_agents"
        assert error["message"] == "the routing needs at least 3 qualified agents, 2 qualify"
        assert [(e["agent_id"], e["reason"]) for e in error["excluded"]] == [("sim_a", "cost")]
        floored = {"count": 3, "strategy": "cheapest_above", "quality_floor": 9.9}
        response = await client.post("/route", json=floored, headers=bearer(ORCH))
        assert response.status_code == 400
        excluded = response.json()["error"]["excluded"]
        assert excluded
        assert all(isinstance(e["p_floor"], float) for e in excluded)  # numbers, as schema

    api(body)


def test_a_deliberation_with_select_stores_who_was_chosen_and_why(api: Any) -> None:
    """POST /deliberation with select: it runs among the chosen agents; the record holds
    the routing (picks with reasons, the others with theirs), stored and read back."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        accepted = await client.post(
            "/deliberation",
            json={"user_query": "q", "scope": "quick",
                  "select": {"count": 2, "task_type": "code", "tags": ["code"]}},
            headers=bearer(ORCH),
        )  # fmt: skip
        assert accepted.status_code == 202, accepted.text
        record = await wait_done(client, accepted.json()["deliberation_id"])
        assert record["status"] == "completed"
        assert record["task_type"] == "code"
        assert sorted(record["agents"]) == ["sim_b", "sim_c"]
        routing = record["routing"]
        assert sorted(p["agent_id"] for p in routing["agents"]) == ["sim_b", "sim_c"]
        assert all(p["reason"] == "best" for p in routing["agents"])
        assert [(e["agent_id"], e["reason"]) for e in routing["excluded"]] == [("sim_a", "tags")]
        assert record["request"]["agent_names"] is None
        assert record["cost_basis"] == 2  # each agent charged its own calls (docs/costs.md)
        assert sorted(record["agent_costs"]) == ["sim_b", "sim_c"]
        stored = await services.orchestrator.list(limit=10)
        assert stored[0].routing is not None
        assert stored[0].routing.model_dump(mode="json") == routing

    api(body)


def test_select_with_too_few_agents_is_400_and_stores_nothing(api: Any) -> None:
    """select of 3 agents tagged code: two declare it; 400 too_few_agents naming sim_a."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        response = await client.post(
            "/deliberation",
            json={"user_query": "q", "select": {"count": 3, "tags": ["code"]}},
            headers=bearer(ORCH),
        )
        assert response.status_code == 400
        error = response.json()["error"]
        assert error["code"] == "too_few_agents"
        assert sorted(error["qualified"]) == ["sim_b", "sim_c"]
        assert [(e["agent_id"], e["reason"]) for e in error["excluded"]] == [("sim_a", "tags")]
        assert (await client.get("/deliberations")).json()["deliberations"] == []

    api(body)


def test_route_of_one_agent_and_a_deliberation_of_one_refused(api: Any) -> None:
    """POST /route count 1: one agent, the best; cheapest_above with a relative floor
    names the floor it computed, the reference and each agent's probability. A
    deliberation's select of 1 is 422 naming select and saying a deliberation needs 2."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        response = await client.post("/route", json={"count": 1}, headers=bearer(ORCH))
        assert response.status_code == 200, response.text
        out = response.json()
        assert len(out["agents"]) == 1
        assert out["reference"]["low"] == out["agents"][0]["low"]  # the best (ties: drawn)
        sent = {"count": 1, "strategy": "cheapest_above", "quality_floor_share": 0.9,
                "confidence": 0.7, "explore_share": 0}  # fmt: skip
        response = await client.post("/route", json=sent, headers=bearer(ORCH))
        assert response.status_code == 200, response.text
        out = response.json()
        reference = out["reference"]
        assert out["quality_floor"] == pytest.approx(0.9 * reference["skill"], abs=1e-6)
        assert (out["quality_floor_share"], out["confidence"]) == (0.9, 0.7)
        [pick] = out["agents"]
        shown = pick["p_floor"] >= 0.7 or pick["detail"].startswith("not yet shown")
        assert shown or pick["agent_id"] == reference["agent_id"]  # the floor's own
        assert all(0.0 <= e["p_floor"] <= 1.0 for e in out["excluded"])
        both = {**sent, "quality_floor": 5.0}
        response = await client.post("/route", json=both, headers=bearer(ORCH))
        assert response.status_code == 422
        assert "give one of quality_floor and quality_floor_share" in response.text
        response = await client.post(
            "/deliberation", json={"user_query": "q", "select": {"count": 1}},
            headers=bearer(ORCH),
        )  # fmt: skip
        assert response.status_code == 422
        error = response.json()["error"]
        assert error["field"] == "select.count"
        assert "a deliberation needs at least 2 agents, not 1" in error["message"]
        assert (await client.get("/deliberations")).json()["deliberations"] == []

    api(body)


def test_agent_names_and_select_together_are_one_line_422(api: Any) -> None:
    """Both agent_names and select (or neither): 422 naming agent_names, one line."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        for sent in (
            {"user_query": "q", "agent_names": ["sim_a", "sim_b"], "select": {"count": 2}},
            {"user_query": "q"},
        ):
            response = await client.post("/deliberation", json=sent, headers=bearer(ORCH))
            assert response.status_code == 422
            error = response.json()["error"]
            assert error["field"] == "agent_names"
            assert "exactly one of agent_names and select" in error["message"]
            assert "\n" not in error["message"]

    api(body)


def test_failing_calls_make_an_agent_down_until_the_clock_passes_its_end() -> None:
    """sim_c's calls all fail: after one deliberation its health is down (GET /agents/sim_c
    with the reason and the end, GET /agents, /metrics) while it stays online, routing
    skips it with reason down, a deliberation naming it leaves it out (reason down, until
    when); 60 s later it is
    recovering (degraded: the next call decides) and routing may choose it again."""
    clock = FixedClock()

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        services.orchestrator.providers["sim_c"] = SimulatedProvider(
            "sim_c", SimulatedSettings(quality=6.0, failure_rate=1.0)
        )
        named = {"user_query": "q", "agent_names": ["sim_a", "sim_b", "sim_c"], "scope": "quick"}
        accepted = await client.post("/deliberation", json=named, headers=bearer(ORCH))
        await wait_done(client, accepted.json()["deliberation_id"])
        agent = (await client.get("/agents/sim_c")).json()
        assert agent["status"] == "online"  # its heartbeat; its health is another matter
        health = agent["health"]
        assert health["status"] == "down"
        assert health["until"] == clock.now().timestamp() + 60.0
        assert "failed calls in a row" in health["reason"]
        assert agent["cooldown"]["until"] == health["until"]
        assert (await client.get("/agents/sim_a")).json()["health"]["status"] == "ok"
        listed = {a["name"]: a for a in (await client.get("/agents")).json()["agents"]}
        assert listed["sim_c"]["health"]["status"] == "down"
        assert listed["sim_a"]["health"]["status"] == "ok"
        for query in ("", "?limit=2"):
            page = (await client.get(f"/agents/directory{query}")).json()["agents"]
            healths = {a["name"]: a["health"]["status"] for a in page}
            assert healths.get("sim_c", "down") == "down"
            assert set(healths.values()) <= {"ok", "down"}
        metrics = (await client.get("/metrics")).text
        assert "agentladder_agents_cooling_down 1.0" in metrics
        assert 'agentladder_agents_health{status="down"} 1.0' in metrics
        assert "agentladder_cooldowns_started_total 1.0" in metrics
        routed = (await client.post("/route", json={"count": 2}, headers=bearer(ORCH))).json()
        assert ("sim_c", "down") in [(e["agent_id"], e["reason"]) for e in routed["excluded"]]
        again = await client.post("/deliberation", json=named, headers=bearer(ORCH))
        assert again.status_code == 202
        without = await wait_done(client, again.json()["deliberation_id"])
        assert without["agents"] == ["sim_a", "sim_b"]
        (left_out,) = without["excluded"]
        assert (left_out["agent_id"], left_out["reason"]) == ("sim_c", "down")
        assert left_out["detail"].startswith("down until ")
        assert left_out["detail"].endswith(f"(in 60 s): {health['reason']}")
        clock.advance(60.0)
        await services.registry.beat_local()
        recovering = (await client.get("/agents/sim_c")).json()
        assert recovering["cooldown"] is None
        assert recovering["health"]["status"] == "degraded"
        assert recovering["health"]["reason"].startswith("recovering")
        assert "agentladder_agents_cooling_down 0.0" in (await client.get("/metrics")).text
        routed = (await client.post("/route", json={"count": 3}, headers=bearer(ORCH))).json()
        assert sorted(p["agent_id"] for p in routed["agents"]) == ["sim_a", "sim_b", "sim_c"]
        shares = {p["agent_id"]: p["success_share"] for p in routed["agents"]}
        assert shares == {"sim_a": None, "sim_b": None, "sim_c": 0.5}

    call_app({**CONFIG, **TOKENS}, body, clock=clock)


@pytest.mark.parametrize("kind", ["memory", "sqlite", "nats"])
def test_a_routed_deliberation_is_stored_and_replays_on_every_store(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """On memory, SQLite and NATS: a select deliberation's record keeps its routing
    through the store, and oracle verify replays profiles and skill with no difference."""
    store = {"memory": "memory://", "sqlite": f"sqlite:///{tmp_path / 'r.db'}"}.get(kind)
    if store is None:
        store = request.getfixturevalue("nats_store_url")

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        accepted = await client.post(
            "/deliberation",
            json={"user_query": "q", "scope": "standard",
                  "select": {"count": 3, "task_type": "audit", "strategy": "explore"}},
            headers=bearer(ORCH),
        )  # fmt: skip
        assert accepted.status_code == 202, accepted.text
        record = await wait_done(client, accepted.json()["deliberation_id"])
        await services.orchestrator.settle()
        found = await services.store.get_deliberation(record["id"])
        assert found is not None
        assert found.body["routing"]["agents"] == record["routing"]["agents"]
        assert found.body["routing"]["seed"] == record["routing"]["seed"]
        report = await verify_store(services.store, services.settings.oracle,
                                    services.settings.skill)  # fmt: skip
        assert report.ok, report
        assert report.skill_events_replayed == 1

    call_app({**CONFIG, **TOKENS}, body, store=store)
