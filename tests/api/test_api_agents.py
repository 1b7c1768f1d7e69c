"""The agents endpoints: heartbeats and roles, listings, the directory, the admin stats."""

from __future__ import annotations

from typing import Any

import httpx

from agentladder.domain.stats import AgentPerformanceStats
from agentladder.services.container import Services
from tests.api.conftest import ADMIN, AGENT_A, ORCH, bearer


def test_configured_agents_are_listed_with_cost_status_and_stats(api: Any) -> None:
    """GET /agents: every in-process agent, declared fields, cost per round, online, stats."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        response = await client.get("/agents")
        assert response.status_code == 200
        agents = {a["name"]: a for a in response.json()["agents"]}
        assert set(agents) == {"sim_a", "sim_b", "sim_c"}
        assert agents["sim_a"]["estimated_cost_per_round"] == 0.025
        assert agents["sim_a"]["status"] == "online"
        assert agents["sim_a"]["stats"]["rank"] == 0
        one = await client.get("/agents/sim_b")
        assert one.json()["capability_tags"] == ["code"]
        missing = await client.get("/agents/ghost")
        assert missing.status_code == 404
        assert missing.json()["error"]["code"] == "not_found"

    api(body)


def test_heartbeat_roles_and_self_promotion(api: Any) -> None:
    """An agent token heartbeats for itself only; rank in a heartbeat is 422; no token 401."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        own = await client.post(
            "/agents/heartbeat", json={"name": "sim_a"}, headers=bearer(AGENT_A)
        )
        assert own.status_code == 200
        other = await client.post(
            "/agents/heartbeat", json={"name": "sim_b"}, headers=bearer(AGENT_A)
        )
        assert other.status_code == 403
        promoted = await client.post(
            "/agents/heartbeat", json={"name": "sim_a", "rank": 9}, headers=bearer(AGENT_A)
        )
        assert promoted.status_code == 422
        assert promoted.json()["error"]["code"] == "server_owned_field"
        assert promoted.json()["error"]["fields"] == ["rank"]
        anonymous = await client.post("/agents/heartbeat", json={"name": "new_one"})
        assert anonymous.status_code == 401
        wrong = await client.post(
            "/agents/heartbeat", json={"name": "x"}, headers=bearer("not-a-real-token-123")
        )
        assert wrong.status_code == 401
        new = await client.post(
            "/agents/heartbeat", json={"name": "new_one"}, headers=bearer(ADMIN)
        )
        assert new.status_code == 200
        assert new.json()["remote"] is True
        assert services.registry.refusals["self_promotion"] == 1

    api(body)


def test_directory_filters_and_sorts(api: Any) -> None:
    """The directory filters by tag, provider, rank and status, and sorts by cost."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        audit = await client.get("/agents/directory", params={"tag": "audit"})
        assert [a["name"] for a in audit.json()["agents"]] == ["sim_a", "sim_c"]
        sim = await client.get("/agents/directory", params={"provider": "sim", "sort": "cost"})
        assert [a["name"] for a in sim.json()["agents"]] == ["sim_b", "sim_a"]
        ranked = await client.get("/agents/directory", params={"min_rank": 1})
        assert ranked.json()["agents"] == []
        bad = await client.get("/agents/directory", params={"min_rank": -1})
        assert bad.status_code == 422
        assert bad.json()["error"]["field"] == "query.min_rank"
        stats = AgentPerformanceStats(rank=2, avg_score=7.0)
        await services.store.commit_stats({"sim_c": (stats, 0)})
        ranked = await client.get("/agents/directory", params={"min_rank": 1, "tag": "code"})
        assert [a["name"] for a in ranked.json()["agents"]] == ["sim_c"]
        assert ranked.json()["agents"][0]["stats"]["rank"] == 2
        by_rank = await client.get("/agents/directory", params={"sort": "rank"})
        assert [a["name"] for a in by_rank.json()["agents"]] == ["sim_c", "sim_a", "sim_b"]
        page = await client.get("/agents/directory", params={"limit": 1, "offset": 1})
        assert [a["name"] for a in page.json()["agents"]] == ["sim_b"]
        too_many = await client.get("/agents/directory", params={"limit": 0})
        assert too_many.status_code == 422

    api(body)


def test_admin_stats_need_the_admin_token(api: Any) -> None:
    """GET /admin/api/agents/stats: 401 anonymous, 403 orchestrator, 200 admin with ratios."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        assert (await client.get("/admin/api/agents/stats")).status_code == 401
        forbidden = await client.get("/admin/api/agents/stats", headers=bearer(ORCH))
        assert forbidden.status_code == 403
        ok = await client.get("/admin/api/agents/stats", headers=bearer(ADMIN))
        assert ok.status_code == 200
        listed = [a["agent_id"] for a in ok.json()["agents"]]
        assert listed == ["sim_a", "sim_b", "sim_c"]  # the configured agents, zero stats

    api(body)


def test_without_tokens_loopback_may_write(api: Any) -> None:
    """With no tokens configured, a loopback client may write."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        response = await client.post("/agents/heartbeat", json={"name": "local_agent"})
        assert response.status_code == 200

    api(body, tokens=False)


def test_metrics_count_requests_agents_awards_and_refusals(api: Any) -> None:
    """/metrics: requests by route and status, agents online, awards, self-promotion refusals."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        await client.get("/agents")
        await client.post(
            "/agents/heartbeat", json={"name": "sim_a", "xp": 1}, headers=bearer(AGENT_A)
        )
        judgment = {"agent_id": "sim_a", "contract_id": "c1", "score": 8.0}
        await client.post("/oracle/judgments", json=judgment, headers=bearer(ORCH))
        text = (await client.get("/metrics")).text
        assert (
            'agentladder_http_requests_total{method="GET",route="/agents",status="200"} 1.0' in text
        )
        assert 'route="/agents/heartbeat",status="422"' in text
        assert "agentladder_agents_online 3.0" in text
        assert 'agentladder_awards_total{kind="judgment"} 1.0' in text
        assert 'agentladder_refusals_total{reason="self_promotion"} 1.0' in text

    api(body)


def test_metrics_count_unmatched_paths_and_refused_bodies(api: Any) -> None:
    """The metrics middleware sees every response: a path no route serves (``unmatched``),
    a body refused before routing (413), and observes each request's latency once."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        assert (await client.get("/no/such/path")).status_code == 404
        huge = b"{" + b" " * 2_000_000 + b"}"
        headers = {"content-type": "application/json", **bearer(ADMIN)}
        refused = await client.post("/agents/heartbeat", content=huge, headers=headers)
        assert refused.status_code == 413
        await client.get("/agents")
        await client.get("/agents")
        text = (await client.get("/metrics")).text
        assert 'method="GET",route="unmatched",status="404"} 1.0' in text
        assert 'method="POST",route="unmatched",status="413"} 1.0' in text
        assert (
            'agentladder_http_request_duration_seconds_count{method="GET",route="/agents"} 2.0'
            in text
        )

    api(body)
