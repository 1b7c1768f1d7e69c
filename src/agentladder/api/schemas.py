"""Response bodies of the API: typed models, so responses are validated and encoded fast."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agentladder.domain.levels import Level
from agentladder.domain.registry import AgentStatus
from agentladder.domain.stats import (
    AgentPerformanceStats,
    latency_max,
    latency_p50,
    latency_p90,
    task_success_ratio,
)
from agentladder.services.registry import AgentView

__all__ = ["Accepted", "AgentOut", "AgentStatsOut", "ValidationRateOut", "agent_out", "stats_out"]


class AgentOut(BaseModel):
    """A registered agent: its declared fields, cost per round, status and stats."""

    model_config = ConfigDict(extra="forbid")

    name: str
    provider_id: str
    model_name: str
    description: str
    capability_tags: tuple[str, ...]
    signing_schemes: tuple[str, ...]
    input_price_per_mtok: float
    output_price_per_mtok: float
    estimated_cost_per_round: float
    status: AgentStatus
    first_seen: float
    last_seen: float
    remote: bool
    stats: AgentPerformanceStats


class AgentStatsOut(AgentPerformanceStats):
    """An agent's stats with what derives from them (the admin view)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent_id: str
    task_success_ratio: float | None
    latency_p50_ms: float | None
    latency_p90_ms: float | None
    latency_max_ms: float | None


class ValidationRateOut(BaseModel):
    """How often the Sentinels check an agent's work."""

    agent_id: str
    task_type: str | None
    level: Level
    validation_rate: float


class Accepted(BaseModel):
    """A deliberation accepted for running."""

    deliberation_id: str
    status: str
    duplicate: bool = Field(default=False)


_NO_STATS = AgentPerformanceStats()


def agent_out(view: AgentView, stats: AgentPerformanceStats | None) -> AgentOut:
    """The API's view of one agent."""
    config = view.registration.config
    return AgentOut(
        name=config.name,
        provider_id=config.provider_id,
        model_name=config.model_name,
        description=config.description,
        capability_tags=config.capability_tags,
        signing_schemes=config.signing_schemes,
        input_price_per_mtok=config.input_price_per_mtok,
        output_price_per_mtok=config.output_price_per_mtok,
        estimated_cost_per_round=config.estimated_cost_per_round,
        status=view.status,
        first_seen=view.registration.first_seen,
        last_seen=view.registration.last_seen,
        remote=view.registration.remote,
        stats=stats or _NO_STATS,
    )


def stats_out(agent_id: str, stats: AgentPerformanceStats) -> AgentStatsOut:
    """Stats plus success ratio and latency percentiles."""
    return AgentStatsOut(
        **stats.model_dump(),
        agent_id=agent_id,
        task_success_ratio=task_success_ratio(stats),
        latency_p50_ms=latency_p50(stats),
        latency_p90_ms=latency_p90(stats),
        latency_max_ms=latency_max(stats),
    )
