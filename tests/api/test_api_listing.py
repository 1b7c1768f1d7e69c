"""GET /agents: the store's listing, the bytes the API encoded from each agent's
``AgentOut`` before, never stale."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentladder.api.schemas import agent_out
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.services.clock import FixedClock
from agentladder.services.container import Services
from tests.api.conftest import CONFIG
from tests.inprocess import call_app


async def _listed(client: httpx.AsyncClient) -> dict[str, dict[str, Any]]:
    response = await client.get("/agents")
    assert response.status_code == 200
    return {a["name"]: a for a in response.json()["agents"]}


def _url(store: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if store == "nats":
        return str(request.getfixturevalue("nats_store_url"))
    return "memory://" if store == "memory" else f"sqlite:///{tmp_path / 'listing.db'}"


async def _as_before(services: Services) -> bytes:
    """GET /agents as the route built it before the stores did: the registry's views, the
    stats and the health this instance tracks, one ``AgentOut`` each."""
    stats = await services.store.list_stats()
    objects = [
        agent_out(
            view,
            None if view.agent_id not in stats else stats[view.agent_id].value,
            services.health.tracked(view.agent_id),
        )
        .model_dump_json()
        .encode()
        for view in await services.registry.list()
    ]
    return b'{"agents":[' + b",".join(objects) + b"]}"


ODD_BEATS: list[dict[str, Any]] = [
    {"name": "odd.one", "provider_id": 'q"uote\\', "description": "é 日本 🦀 \u2028 \t\n\x01",
     "capability_tags": ["a b", "ü"], "input_price_per_mtok": 0.3, "output_price_per_mtok": 1e-9},
    {"name": "Plain-2", "description": '"status":"offline"} {"name":"x","stats":{}}}',
     "signing_schemes": ["ed25519"]},
]  # fmt: skip


@pytest.mark.parametrize("store", ["memory", "sqlite", "nats"])
def test_the_listing_is_byte_for_byte_the_former_rendering(
    store: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Agents with odd characters and unicode (a description holding what the listing's
    objects are cut at), with and without stats, online and offline, with and without a
    health this instance tracks: the body is exactly what the route answered before, at
    every step."""
    clock = FixedClock()

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        async def same() -> bytes:
            response = await client.get("/agents")
            assert response.status_code == 200
            assert response.headers["content-type"] == "application/json"
            assert response.content == await _as_before(services)
            return response.content

        await same()
        for beat in ODD_BEATS:
            assert (await client.post("/agents/heartbeat", json=beat)).status_code == 200
        stats = AgentPerformanceStats(rank=4, avg_score=6.25, recent_latencies_ms=(1.5,))
        await services.store.commit_stats({"odd.one": (stats, 0), "sim_a": (stats, 0)})
        assert "odd.one" in (await same()).decode()
        services.health.pin("Plain-2", "its key is missing")
        pinned = {a["name"]: a["health"] for a in json.loads(await same())["agents"]}
        assert pinned["Plain-2"]["status"] == "down"
        assert pinned["odd.one"]["reason"] == "no call yet"
        clock.advance(31)  # three 10 s heartbeat intervals and more
        assert (await client.post("/agents/heartbeat", json=ODD_BEATS[1])).status_code == 200
        listed = json.loads(await same())["agents"]
        assert {a["name"]: a["status"] for a in listed} == {
            "Plain-2": "online", "odd.one": "offline",
            "sim_a": "offline", "sim_b": "offline", "sim_c": "offline",
        }  # fmt: skip

    call_app(CONFIG, body, store=_url(store, tmp_path, request), clock=clock)


def test_the_openapi_schema_of_the_listing_is_unchanged() -> None:
    """GET /agents still declares ``AgentsOut``: ``{"agents": [AgentOut, ...]}``."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        doc = (await client.get("/openapi.json")).json()
        ok = doc["paths"]["/agents"]["get"]["responses"]["200"]["content"]["application/json"]
        assert ok["schema"] == {"$ref": "#/components/schemas/AgentsOut"}
        agents = doc["components"]["schemas"]["AgentsOut"]["properties"]["agents"]
        assert agents["items"] == {"$ref": "#/components/schemas/AgentOut"}

    call_app(CONFIG, body)


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_the_listing_follows_heartbeats_ranks_status_and_new_agents(
    store: str, tmp_path: Path
) -> None:
    """Each change shows in the next listing: a heartbeat's new declaration (of an agent
    outside the config: the config declares its own), a new rank, an agent going offline,
    a new agent; unchanged agents are the same JSON as before."""
    clock = FixedClock()
    url = "memory://" if store == "memory" else f"sqlite:///{tmp_path / 'listing.db'}"

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        beat = {"name": "sim_x", "provider_id": "other", "description": "reviews audits"}
        assert (await client.post("/agents/heartbeat", json=beat)).status_code == 200
        before = await _listed(client)
        assert await _listed(client) == before
        beat["description"] = "now reviews code"
        assert (await client.post("/agents/heartbeat", json=beat)).status_code == 200
        after = await _listed(client)
        assert after["sim_x"]["description"] == "now reviews code"
        assert after["sim_a"] == before["sim_a"]

        stats = AgentPerformanceStats(rank=3, avg_score=8.0)
        await services.store.commit_stats({"sim_b": (stats, 0)})
        ranked = await _listed(client)
        assert ranked["sim_b"]["stats"]["rank"] == 3
        assert ranked["sim_a"] == before["sim_a"]

        clock.advance(3600)  # no heartbeat for an hour: every agent is offline
        assert {a["status"] for a in (await _listed(client)).values()} == {"offline"}
        await services.registry.beat_local()  # the configured agents, not sim_x
        statuses = {name: a["status"] for name, a in (await _listed(client)).items()}
        assert statuses == {"sim_a": "online", "sim_b": "online", "sim_c": "online",
                            "sim_x": "offline"}  # fmt: skip

        newcomer = {"name": "sim_new", "capability_tags": ["audit"]}
        assert (await client.post("/agents/heartbeat", json=newcomer)).status_code == 200
        assert set(await _listed(client)) == {"sim_a", "sim_b", "sim_c", "sim_x", "sim_new"}

    call_app(CONFIG, body, store=url, clock=clock)
