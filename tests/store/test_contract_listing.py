"""Store contract, the agent listing: every backend answers the bytes the API's ``AgentOut``
encodes, for the state as it is at the call (no stale status, stats or declaration)."""

from __future__ import annotations

import json
from typing import Any

from agentladder.api.schemas import agent_out
from agentladder.domain.agents import AgentConfig
from agentladder.domain.registry import online_window_s, status_within
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.services.agents.registry import AgentView
from agentladder.store.base import Store
from agentladder.store.records import Registration

WINDOW = online_window_s(10.0)
NOW = 1_800_000_000.25

ODD = {
    "odd.name-1": {
        "provider_id": 'quote " backslash \\ slash / ',
        "model_name": 'model "é" / ünïcode',
        # controls and separators: free text holds them (an identifier may not: domain/text.py)
        "description": '"status":"online","stats":{"rank":99}} \\" end\\'
        + " tab\there\nnewline \x01 \x7f \u2028 \u2029",
        "capability_tags": ("sql", "é", "日本語", "🦀 crab"),
        "signing_schemes": ("ed25519",),
        "input_price_per_mtok": 0.1,
        "output_price_per_mtok": 1e-7,
    },
    "Zed_2": {"description": "Ünïcödé — “quotes” <b>&amp;</b>", "input_price_per_mtok": 3.0},
    "a": {},
}


def _registration(name: str, last_seen: float, **fields: Any) -> Registration:
    return Registration(
        config=AgentConfig(name=name, **fields),
        first_seen=1_700_000_000.123456,
        last_seen=last_seen,
        remote=name == "a",
    )


async def _expected(store: Store, now: float) -> bytes:
    """The listing as the API rendered it before the store built it: ``AgentOut`` per
    agent from the decoded registration, its status and its stats (its health, which
    lives in the serving instance, is added by the route: ``api/schemas.with_health``)."""
    stats = await store.list_stats()
    objects = []
    for registration in await store.list_registrations():
        view = AgentView(registration, status_within(registration.last_seen, now, WINDOW))
        found = stats.get(registration.agent_id)
        agent = agent_out(view, None if found is None else found.value)
        objects.append(agent.model_dump_json(exclude={"health"}))
    return ('{"agents":[' + ",".join(objects) + "]}").encode()


def test_the_listing_is_the_api_encoding_of_the_current_state(with_store: Any) -> None:
    """Odd characters, unicode, agents with and without stats, online, offline and exactly
    at the edge of the window: the same bytes as ``AgentOut``; each change shows at once."""

    async def body(store: Store) -> None:
        assert await store.agent_listing_json(NOW, WINDOW) == b'{"agents":[]}'
        await store.put_registration(_registration("odd.name-1", NOW - 1, **ODD["odd.name-1"]))
        await store.put_registration(_registration("Zed_2", NOW - WINDOW, **ODD["Zed_2"]))
        await store.put_registration(_registration("a", NOW - WINDOW + 0.001))
        await store.put_registration(_registration("offline", NOW - 3600.5))
        stats = AgentPerformanceStats(
            rank=2, avg_score=7.123456789, recent_latencies_ms=(12.5, 0.1), avg_latency_ms=6.3
        )
        await store.commit_stats({"odd.name-1": (stats, 0), "offline": (stats, 0)})

        listed = await store.agent_listing_json(NOW, WINDOW)
        assert listed == await _expected(store, NOW)
        objects = {a["name"]: a for a in json.loads(listed)["agents"]}
        assert list(objects) == ["Zed_2", "a", "odd.name-1", "offline"]
        assert {name: a["status"] for name, a in objects.items()} == {
            "Zed_2": "offline",  # exactly one window old: offline
            "a": "online",
            "odd.name-1": "online",
            "offline": "offline",
        }
        assert objects["odd.name-1"]["description"] == ODD["odd.name-1"]["description"]
        assert objects["odd.name-1"]["stats"]["rank"] == 2
        assert objects["a"]["stats"] == AgentPerformanceStats().model_dump(mode="json")

        # a new rank, a new declaration and the passing of time: all in the next listing
        await store.commit_stats({"a": (AgentPerformanceStats(rank=5, wins=5), 0)})
        await store.put_registration(_registration("Zed_2", NOW, description="back ✓"))
        later = NOW + 25.0
        listed = await store.agent_listing_json(later, WINDOW)
        assert listed == await _expected(store, later)
        objects = {a["name"]: a for a in json.loads(listed)["agents"]}
        assert objects["a"]["stats"]["rank"] == 5
        assert objects["a"]["status"] == "offline"
        assert objects["Zed_2"]["status"] == "online"
        assert objects["Zed_2"]["description"] == "back ✓"

    with_store(body)
