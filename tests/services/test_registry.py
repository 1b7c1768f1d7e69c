"""The registry: heartbeats, online status, refusals of self-promotion and impersonation."""

from __future__ import annotations

from typing import Any

import pytest

from agentladder.config import AgentSettings
from agentladder.domain.registry import (
    AgentStatus,
    SelfPromotion,
    agent_status,
    online_window_s,
    status_within,
)
from agentladder.errors import InvalidInput, NotFound, Refused
from agentladder.providers.settings import SimulatedSettings
from agentladder.services.agents.registry import Registry
from agentladder.services.clock import FixedClock
from agentladder.store.base import Store

SPEC_AGENT = {
    "name": "audit_expert",
    "provider_id": "openai",
    "model_name": "gpt-4o",
    "description": "Financial audit specialist",
    "capability_tags": ["audit", "compliance", "legal", "financial"],
    "signing_schemes": ["eip712"],
    "input_price_per_mtok": 2.5,
    "output_price_per_mtok": 10.0,
}


def test_status_is_online_for_three_intervals() -> None:
    """Online while the last heartbeat is younger than 3 intervals, offline after."""
    assert agent_status(100.0, 129.9, 10.0) is AgentStatus.ONLINE
    assert agent_status(100.0, 130.0, 10.0) is AgentStatus.OFFLINE
    assert online_window_s(10.0) == 30.0
    assert status_within(100.0, 129.9, 30.0) is AgentStatus.ONLINE
    assert status_within(100.0, 130.0, 30.0) is AgentStatus.OFFLINE


def test_heartbeat_registers_the_declared_fields(with_store: Any) -> None:
    """A heartbeat's fields flow into the registration; first_seen stays, last_seen moves."""

    async def body(store: Store) -> None:
        clock = FixedClock()
        registry = Registry(store, clock=clock)
        first = await registry.heartbeat({**SPEC_AGENT, "future_field": 1})
        clock.advance(10)
        second = await registry.heartbeat(SPEC_AGENT)
        assert second.registration.first_seen == first.registration.first_seen
        assert second.registration.last_seen == first.registration.last_seen + 10
        view = await registry.get("audit_expert")
        assert view.registration.config.capability_tags == (
            "audit",
            "compliance",
            "legal",
            "financial",
        )
        assert view.registration.config.estimated_cost_per_round == pytest.approx(0.025)
        clock.advance(30)
        assert (await registry.get("audit_expert")).status is AgentStatus.OFFLINE
        assert await registry.online() == {"audit_expert": False}

    with_store(body)


def test_online_among_says_what_online_says_of_the_agents_asked(with_store: Any) -> None:
    """online_among: only the registered agents asked, each online or not as online says."""

    async def body(store: Store) -> None:
        clock = FixedClock()
        registry = Registry(store, clock=clock)
        await registry.heartbeat(SPEC_AGENT)
        clock.advance(25)
        await registry.heartbeat({**SPEC_AGENT, "name": "fresh"})
        await registry.heartbeat({**SPEC_AGENT, "name": "other"})
        clock.advance(10)
        asked = ["fresh", "ghost", "audit_expert"]
        among = await registry.online_among(asked)
        assert among == {"fresh": True, "audit_expert": False}
        everyone = await registry.online()
        assert among == {agent: everyone[agent] for agent in asked if agent in everyone}

    with_store(body)


@pytest.mark.parametrize("field", ["rank", "xp", "level", "wins", "avg_score", "stats"])
def test_heartbeat_with_a_server_owned_field_is_refused(with_store: Any, field: str) -> None:
    """rank, xp, level, wins, avg_score, stats in a heartbeat: refused, counted, not stored."""

    async def body(store: Store) -> None:
        registry = Registry(store)
        with pytest.raises(SelfPromotion) as caught:
            await registry.heartbeat({**SPEC_AGENT, field: 99})
        assert field in str(caught.value)
        assert registry.refusals["self_promotion"] == 1
        assert await store.get_registration("audit_expert") is None

    with_store(body)


def test_an_agent_cannot_heartbeat_as_another(with_store: Any) -> None:
    """An agent authenticated as X heartbeating with name Y is refused and counted."""

    async def body(store: Store) -> None:
        registry = Registry(store)
        with pytest.raises(Refused):
            await registry.heartbeat(SPEC_AGENT, as_agent="someone_else")
        assert registry.refusals["impersonation"] == 1
        assert (await registry.heartbeat(SPEC_AGENT, as_agent="audit_expert")).registration.remote

    with_store(body)


def test_bad_heartbeats_name_the_field(with_store: Any) -> None:
    """A bad name or negative price is an InvalidInput naming the field; unknown agents 404."""

    async def body(store: Store) -> None:
        registry = Registry(store)
        with pytest.raises(InvalidInput) as caught:
            await registry.heartbeat({**SPEC_AGENT, "input_price_per_mtok": -1})
        assert caught.value.field == "input_price_per_mtok"
        with pytest.raises(InvalidInput) as caught:
            await registry.heartbeat({"name": "../etc"})
        assert caught.value.field == "name"
        with pytest.raises(NotFound):
            await registry.get("ghost")

    with_store(body)


def test_the_server_heartbeats_for_its_in_process_agents(with_store: Any) -> None:
    """Configured agents with a backend and not remote are registered by beat_local."""

    async def body(store: Store) -> None:
        configured = [
            AgentSettings(name="sim_a", backend=SimulatedSettings(quality=7.5)),
            AgentSettings(name="far", backend=SimulatedSettings(), remote=True),
            AgentSettings(name="declared_only"),
        ]
        registry = Registry(store, configured=configured)
        views = await registry.beat_local()
        assert [v.agent_id for v in views] == ["sim_a"]
        assert not views[0].registration.remote
        assert [v.agent_id for v in await registry.list()] == ["sim_a"]

    with_store(body)
