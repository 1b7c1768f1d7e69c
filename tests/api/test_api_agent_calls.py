"""``POST /agents/{id}/calls``: an outside call's outcome in the agent's health and stats,
a bad request in neither, the role and the agent checked, a field out of range named."""

from __future__ import annotations

from typing import Any

import httpx

from agentladder.services.container import Services
from tests.api.conftest import AGENT_A, ORCH, bearer


def test_outcomes_feed_health_and_stats_but_bad_requests_do_not(api: Any) -> None:
    """Three 429s in a row take the agent down; an answer is a completed task with its
    latency; three 400s leave another agent's health and stats untouched."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        async def post(agent: str, **call: Any) -> dict[str, Any]:
            sent = await client.post(f"/agents/{agent}/calls", json=call, headers=bearer(ORCH))
            assert sent.status_code == 200, sent.text
            found: dict[str, Any] = sent.json()
            return found

        ok = await post("sim_a", latency_ms=120.0, outcome="ok", cost_usd=0.002,
                        input_tokens=30, output_tokens=12)  # fmt: skip
        assert ok["counted"] is True
        assert ok["health"]["status"] == "ok"
        for _ in range(3):
            limited = await post("sim_b", latency_ms=40.0, outcome="rate_limited",
                                 error="429 slow down", retry_after_s=2)  # fmt: skip
        assert limited["health"]["status"] == "down"
        assert limited["health"]["last_error"] == "429 slow down"
        for _ in range(3):
            bad = await post("sim_c", latency_ms=5.0, outcome="bad_request")
            assert bad["counted"] is False
        assert bad["health"]["calls"] == 0
        await services.gateway.stats.flush()
        stats = {a: (await client.get(f"/agents/{a}")).json()["stats"] for a in
                 ("sim_a", "sim_b", "sim_c")}  # fmt: skip
        assert stats["sim_a"]["tasks_completed"] == 1
        assert stats["sim_b"]["tasks_failed"] == 3
        assert stats["sim_c"]["tasks_completed"] == stats["sim_c"]["tasks_failed"] == 0
        assert services.gateway.calls.cost["sim_a"] == 0.002

    api(body)


def test_role_agent_and_fields_are_checked(api: Any) -> None:
    """No token: 401; an agent's token: 403; an id nobody knows: 404 with the closest;
    an unknown outcome or a negative latency: 422 naming the field."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        call = {"latency_ms": 10, "outcome": "ok"}
        assert (await client.post("/agents/sim_a/calls", json=call)).status_code == 401
        agent = await client.post("/agents/sim_a/calls", json=call, headers=bearer(AGENT_A))
        assert agent.status_code == 403
        ghost = await client.post("/agents/sim_x/calls", json=call, headers=bearer(ORCH))
        assert ghost.status_code == 404
        assert "sim_" in ghost.text
        for wrong, field in (({**call, "outcome": "meh"}, "outcome"),
                             ({**call, "latency_ms": -1}, "latency_ms")):  # fmt: skip
            refused = await client.post("/agents/sim_a/calls", json=wrong, headers=bearer(ORCH))
            assert refused.status_code == 422
            assert field in refused.text

    api(body)
