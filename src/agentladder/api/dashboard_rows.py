"""The agents as the dashboard's table and picker show them: one ``AgentRow`` each, built
on a CPU thread (``services/offload.py``) from the registrations, stats, profiles and the
health of their provider calls (read on the loop: ``HealthMonitor`` is not shared with
threads)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from agentladder.api.schemas import AgentOut, agent_out
from agentladder.domain.levels import Level
from agentladder.domain.probation import OVERALL as ALL_TASKS
from agentladder.domain.probation import EffectiveRate, RateReason, streams_on_probation
from agentladder.domain.profile import AgentProfile
from agentladder.domain.routing.health import AgentHealth
from agentladder.domain.stats import (
    AgentPerformanceStats,
    latency_p50,
    latency_p90,
    task_success_ratio,
)
from agentladder.services.agents.registry import AgentView
from agentladder.services.container import Services
from agentladder.services.offload import off_loop
from agentladder.services.oracle.service import Oracle
from agentladder.store.records import Versioned

__all__ = ["AgentRow", "agent_row", "all_profiles", "probation_of", "rows", "tags_of"]


class AgentRow(BaseModel):
    """One agent as the table and the picker show it."""

    name: str
    provider: str
    model: str
    description: str
    tags: tuple[str, ...]
    status: str  # its heartbeat: online or offline
    health: str = "ok"  # its provider calls: ok, degraded or down
    health_why: str = ""
    rank: int
    level: Level
    xp: int
    avg_score: float | None  # none before a deliberation in which it was scored
    latency_p50_ms: float | None  # none while no call of it answered
    latency_p90_ms: float | None
    success_ratio: float | None
    cost_per_round: float
    probation: str | None = None  # "probation" or "model change", while on probation
    probation_why: str | None = None  # each stream on probation, its cause and passes left


def probation_of(profile: AgentProfile | None, oracle: Oracle) -> dict[str, EffectiveRate]:
    """The streams of ``profile`` on probation now (``*`` is overall)."""
    if profile is None or not profile.probation:
        return {}
    return streams_on_probation(profile, oracle.rules, oracle.sentinel)


def _probation_mark(streams: dict[str, EffectiveRate]) -> tuple[str | None, str | None]:
    """The badge and its explanation for the agents table."""
    if not streams:
        return None, None
    why = "; ".join(
        f"{'overall' if stream == ALL_TASKS else stream}: {rate.reason.value.replace('_', ' ')},"
        f" {rate.clearance_left} passed validations to go"
        for stream, rate in streams.items()
    )
    causes = {rate.reason for rate in streams.values()}
    label = "model change" if causes == {RateReason.MODEL_CHANGE} else "probation"
    return label, why


async def all_profiles(services: Services) -> dict[str, AgentProfile]:
    """Every profile, by agent id."""
    return {profile.id: profile for profile in await services.store.list_profiles()}


def agent_row(agent: AgentOut, profile: AgentProfile | None, oracle: Oracle) -> AgentRow:
    """One agent's row."""
    stats = agent.stats
    label, why = _probation_mark(probation_of(profile, oracle))
    answered = stats.tasks_completed > 0  # else its latencies are its failures'
    return AgentRow(
        name=agent.name, provider=agent.provider_id, model=agent.model_name,
        description=agent.description, tags=agent.capability_tags, status=agent.status.value,
        health=agent.health.status.value, health_why=agent.health.reason,
        rank=stats.rank, level=profile.level if profile else Level.ROOKIE,
        xp=profile.xp if profile else 0,
        avg_score=stats.avg_score if stats.deliberations_completed else None,
        latency_p50_ms=latency_p50(stats) if answered else None,
        latency_p90_ms=latency_p90(stats) if answered else None,
        success_ratio=task_success_ratio(stats),
        cost_per_round=agent.estimated_cost_per_round, probation=label, probation_why=why,
    )  # fmt: skip


def _rows_of(
    views: Sequence[AgentView],
    stats: Mapping[str, Versioned[AgentPerformanceStats]],
    profiles: Mapping[str, AgentProfile],
    health: Mapping[str, AgentHealth | None],
    oracle: Oracle,
) -> list[AgentRow]:
    """Every agent's row (CPU work: on a CPU thread)."""
    agents = [
        agent_out(
            view,
            found.value if (found := stats.get(view.agent_id)) else None,
            health.get(view.agent_id),
        )
        for view in views
    ]
    return [agent_row(agent, profiles.get(agent.name), oracle) for agent in agents]


async def rows(services: Services, profiles: dict[str, AgentProfile]) -> list[AgentRow]:
    """Every registered agent's row."""
    stats = await services.store.list_stats()
    views = await services.registry.list()
    health = {view.agent_id: services.health.tracked(view.agent_id) for view in views}
    return await off_loop(_rows_of, views, stats, profiles, health, services.oracle)


def tags_of(found: list[AgentRow]) -> list[str]:
    """Every tag the agents declare, sorted."""
    return sorted({tag for row in found for tag in row.tags})
