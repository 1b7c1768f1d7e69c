"""GET /agents reuses a cached fragment per agent: it must never show a stale one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from agentladder.domain.stats import AgentPerformanceStats
from agentladder.services.clock import FixedClock
from agentladder.services.container import Services
from tests.api.conftest import CONFIG
from tests.inprocess import call_app


async def _listed(client: httpx.AsyncClient) -> dict[str, dict[str, Any]]:
    response = await client.get("/agents")
    assert response.status_code == 200
    return {a["name"]: a for a in response.json()["agents"]}


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_the_listing_follows_heartbeats_ranks_status_and_new_agents(
    store: str, tmp_path: Path
) -> None:
    """Each change shows in the next listing: a heartbeat's new declaration, a new rank, an
    agent going offline, a new agent; unchanged agents are the same JSON as before."""
    clock = FixedClock()
    url = "memory://" if store == "memory" else f"sqlite:///{tmp_path / 'listing.db'}"

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        before = await _listed(client)
        assert await _listed(client) == before
        beat = {"name": "sim_c", "provider_id": "other", "description": "now reviews code"}
        assert (await client.post("/agents/heartbeat", json=beat)).status_code == 200
        after = await _listed(client)
        assert after["sim_c"]["description"] == "now reviews code"
        assert after["sim_a"] == before["sim_a"]

        stats = AgentPerformanceStats(rank=3, avg_score=8.0)
        await services.store.commit_stats({"sim_b": (stats, 0)})
        ranked = await _listed(client)
        assert ranked["sim_b"]["stats"]["rank"] == 3
        assert ranked["sim_a"] == before["sim_a"]

        clock.advance(3600)  # no heartbeat for an hour: every agent is offline
        assert {a["status"] for a in (await _listed(client)).values()} == {"offline"}
        await services.registry.beat_local()
        assert {a["status"] for a in (await _listed(client)).values()} == {"online"}

        newcomer = {"name": "sim_new", "capability_tags": ["audit"]}
        assert (await client.post("/agents/heartbeat", json=newcomer)).status_code == 200
        assert set(await _listed(client)) == {"sim_a", "sim_b", "sim_c", "sim_new"}

    call_app(CONFIG, body, store=url, clock=clock)
