"""A small world of simulated agents around one store, for orchestrator tests."""

from __future__ import annotations

from collections.abc import Mapping

from agentladder.config import AgentSettings, OrchestratorSettings
from agentladder.providers.base import Provider
from agentladder.providers.settings import SimulatedSettings
from agentladder.providers.simulated import SimulatedProvider
from agentladder.services.agents.registry import Registry
from agentladder.services.clock import FixedClock
from agentladder.services.deliberations.orchestrator import Orchestrator
from agentladder.services.oracle.service import Oracle
from agentladder.services.skill.service import SkillService
from agentladder.store.base import Store


def simulated(qualities: Mapping[str, float], noise: float = 0.0) -> dict[str, Provider]:
    """One simulated provider per agent with the given quality."""
    return {
        agent: SimulatedProvider(agent, SimulatedSettings(quality=quality, noise=noise))
        for agent, quality in qualities.items()
    }


async def world(
    store: Store,
    providers: Mapping[str, Provider],
    *,
    timeout_s: float = 5.0,
    clock: FixedClock | None = None,
    settings: OrchestratorSettings | None = None,
    skill: SkillService | None = None,
    prices: Mapping[str, tuple[float, float]] | None = None,
) -> Orchestrator:
    """An orchestrator over ``store`` whose agents are registered and online; ``prices``:
    an agent's (input, output) prices per million tokens (default 1.0 and 0.0)."""
    clock = clock or FixedClock()
    agents = {
        name: AgentSettings(
            name=name,
            backend=SimulatedSettings(),
            input_price_per_mtok=(prices or {}).get(name, (1.0, 0.0))[0],
            output_price_per_mtok=(prices or {}).get(name, (1.0, 0.0))[1],
        )
        for name in providers
    }
    registry = Registry(store, clock=clock, configured=agents.values(), skill=skill)
    await registry.beat_local()
    return Orchestrator(
        store=store,
        registry=registry,
        oracle=Oracle(store, clock=clock, agents=agents, skill=skill),
        providers=providers,
        agents=agents,
        settings=settings or OrchestratorSettings(),
        clock=clock,
        timeout_s=timeout_s,
    )
