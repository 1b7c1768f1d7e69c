"""Deliberations over HTTP: the spec's three examples, the rank filter, reports, errors."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import httpx

from agentladder.providers.settings import SimulatedSettings
from agentladder.providers.simulated import SimulatedProvider
from agentladder.services.container import Services
from tests.api.conftest import CONFIG, ORCH, TOKENS, bearer
from tests.inprocess import call_app


async def wait_done(client: httpx.AsyncClient, deliberation_id: str) -> dict[str, Any]:
    for _ in range(200):
        record: dict[str, Any] = (await client.get(f"/deliberation/{deliberation_id}")).json()
        if record["status"] in ("completed", "failed") and record["ranking"]["state"] == "applied":
            return record
        await asyncio.sleep(0.02)
    raise AssertionError(f"deliberation {deliberation_id} did not finish")


def test_the_three_examples_driven_over_http(api: Any) -> None:
    """POST /deliberation with simulated agents scoring as in the spec: B, A, A promoted."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        examples = [
            {"A": 7.5, "B": 8.2, "C": 6.1},
            {"A": 8.0, "B": 7.5, "C": 7.8, "D": 6.0},
            {"A": 9.0, "B": 8.5},
        ]
        for name in "ABCD":
            heartbeat = await client.post(
                "/agents/heartbeat", json={"name": name}, headers=bearer(ORCH) | {}
            )
            assert heartbeat.status_code in (200, 403)
        # the orchestrator role may not heartbeat: register the four as admin would
        for name in "ABCD":
            await services.registry.heartbeat({"name": name})
        promoted = []
        for qualities in examples:
            for name, quality in qualities.items():
                services.orchestrator.providers[name] = SimulatedProvider(
                    name, SimulatedSettings(quality=quality)
                )
            accepted = await client.post(
                "/deliberation",
                json={"user_query": "q", "agent_names": list(qualities), "scope": "standard"},
                headers=bearer(ORCH),
            )
            assert accepted.status_code == 202, accepted.text
            record = await wait_done(client, accepted.json()["deliberation_id"])
            promoted.append(record["ranking"]["promoted"])
        assert promoted == [["B"], ["A"], ["A"]]
        ranks = {
            a["name"]: a["stats"]["rank"] for a in (await client.get("/agents")).json()["agents"]
        }
        assert (ranks["A"], ranks["B"], ranks["C"], ranks["D"]) == (2, 1, 0, 0)
        listed = (await client.get("/deliberations")).json()["deliberations"]
        assert len(listed) == 3

    api(body)


def test_too_few_qualified_agents_is_400_with_the_excluded_list(api: Any) -> None:
    """Fewer than 2 at min_agent_rank: 400 whose error lists {agent_id, rank, reason}."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        response = await client.post(
            "/deliberation",
            json={
                "user_query": "q",
                "agent_names": ["sim_a", "sim_b"],
                "min_agent_rank": 1,
            },
            headers=bearer(ORCH),
        )
        assert response.status_code == 400
        error = response.json()["error"]
        assert error["code"] == "too_few_agents"
        assert error["excluded"] == [
            {"agent_id": "sim_a", "rank": 0, "reason": "below_min_rank"},
            {"agent_id": "sim_b", "rank": 0, "reason": "below_min_rank"},
        ]
        unknown = await client.get("/deliberation/nope")
        assert unknown.status_code == 404

    api(body)


def test_reported_results_rank_once(api: Any) -> None:
    """POST /deliberations/results ranks a deliberation run elsewhere; a repeat is a duplicate."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        report = {
            "deliberation_id": "ext-1",
            "rounds": [
                {"agents": {"x": {"aggregated_score": 6.0}, "y": {"aggregated_score": 9.0}}}
            ],
        }
        first = await client.post("/deliberations/results", json=report, headers=bearer(ORCH))
        assert first.status_code == 200
        assert first.json()["duplicate"] is False
        again = await client.post("/deliberations/results", json=report, headers=bearer(ORCH))
        assert again.json()["duplicate"] is True
        await services.orchestrator.settle()
        y = await services.store.get_stats("y")
        assert y is not None
        assert y.value.rank == 1

    api(body)


def test_bodies_over_the_limit_are_413_and_bad_json_400(api: Any) -> None:
    """A 2 MiB body gets 413; a body that is not JSON gets 400; nothing is stored."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        big = await client.post(
            "/deliberation", content=b"{" + b" " * (2 * 1024 * 1024) + b"}",
            headers={**bearer(ORCH), "content-type": "application/json"},
        )  # fmt: skip
        assert big.status_code == 413
        assert big.json()["error"]["code"] == "payload_too_large"
        broken = await client.post(
            "/deliberation", content=b'{"user_query": "\xff\xfe"',
            headers={**bearer(ORCH), "content-type": "application/json"},
        )  # fmt: skip
        assert broken.status_code == 400
        assert broken.json()["error"]["code"] == "bad_request"
        assert await services.store.list_deliberations() == []

    api(body)


def test_health_and_readiness(api: Any) -> None:
    """/healthz answers; /readyz answers when the store does."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        assert (await client.get("/healthz")).json() == {"status": "ok"}
        ready = await client.get("/readyz")
        assert ready.status_code == 200
        assert ready.json()["status"] == "ready"
        assert (await client.get("/openapi.json")).status_code == 200

    api(body)


def test_a_full_instance_answers_503_busy_with_retry_after(api: Any) -> None:
    """max_running 1 and max_waiting 1, agents of 300 ms: the third POST /deliberation is
    503 busy with Retry-After, stores nothing, and /metrics shows one running, one waiting."""
    config = copy.deepcopy({**CONFIG, **TOKENS})
    config["orchestrator"] = {"max_running": 1, "max_waiting": 1}
    for agent in config["agents"]:
        agent["backend"] = {**agent["backend"], "latency_ms": 300}
    request = {"user_query": "q", "agent_names": ["sim_a", "sim_b"], "scope": "quick"}

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        for _ in range(2):
            accepted = await client.post("/deliberation", json=request, headers=bearer(ORCH))
            assert accepted.status_code == 202
        busy = await client.post("/deliberation", json=request, headers=bearer(ORCH))
        assert busy.status_code == 503
        assert busy.headers["retry-after"] == "1"
        assert busy.json()["error"]["code"] == "busy"
        listed = (await client.get("/deliberations")).json()["deliberations"]
        assert len(listed) == 2
        text = (await client.get("/metrics")).text
        assert 'agentladder_deliberations_in_progress{state="running"} 1.0' in text
        assert 'agentladder_deliberations_in_progress{state="waiting"} 1.0' in text
        await services.orchestrator.settle()

    call_app(config, body)
