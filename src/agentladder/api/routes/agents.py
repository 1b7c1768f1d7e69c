"""``/agents``: heartbeats, the registered agents with their stats, the directory."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Query, Request, Response
from pydantic import BaseModel

from agentladder.api.deps import MAX_OFFSET, CallerDep, ServicesDep
from agentladder.api.listing import AgentListing
from agentladder.api.schemas import AgentOut, AgentStatsOut, agent_out, stats_out
from agentladder.domain.registry import AgentStatus

__all__ = ["router"]

router = APIRouter(tags=["agents"])


class AgentsOut(BaseModel):
    """``{"agents": [...]}``."""

    agents: list[AgentOut]


class AgentStatsListOut(BaseModel):
    """``{"agents": [...]}`` with derived stats."""

    agents: list[AgentStatsOut]


async def _all(services: ServicesDep) -> list[AgentOut]:
    views = await services.registry.list()
    stats = await services.store.list_stats()
    return [agent_out(v, stats[v.agent_id].value if v.agent_id in stats else None) for v in views]


@router.post("/agents/heartbeat", response_model=AgentOut)
async def heartbeat(
    services: ServicesDep, caller: CallerDep, payload: Annotated[dict[str, Any], Body()]
) -> AgentOut:
    """An agent's heartbeat: its declared fields. Rank, stats, XP or level: refused (422)."""
    caller.require("agent")
    as_agent = caller.agent_id if caller.role == "agent" else None
    view = await services.registry.heartbeat(payload, as_agent=as_agent)
    stats = await services.store.get_stats(view.agent_id)
    return agent_out(view, None if stats is None else stats.value)


@router.get("/agents", response_model=AgentsOut)
async def list_agents(services: ServicesDep, request: Request) -> Response:
    """Every registered agent with its declared fields, cost per round, status and stats."""
    listing: AgentListing = request.app.state.listing
    views = await services.registry.list()
    stats = await services.store.list_stats()
    return Response(listing.body(views, stats), media_type="application/json")


@router.get("/agents/directory", response_model=AgentsOut)
async def directory(
    services: ServicesDep,
    tag: str | None = None,
    provider: str | None = None,
    min_rank: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    online: bool | None = None,
    sort: Literal["name", "rank", "avg_score", "cost"] = "name",
) -> AgentsOut:
    """The public directory, filtered by tag, provider, minimum rank and status, sorted."""
    agents = [
        a
        for a in await _all(services)
        if (tag is None or tag in a.capability_tags)
        and (provider is None or a.provider_id == provider)
        and a.stats.rank >= min_rank
        and (online is None or (a.status is AgentStatus.ONLINE) == online)
    ]
    keys = {
        "name": lambda a: (a.name,),
        "rank": lambda a: (-a.stats.rank, a.name),
        "avg_score": lambda a: (-a.stats.avg_score, a.name),
        "cost": lambda a: (a.estimated_cost_per_round, a.name),
    }
    return AgentsOut(agents=sorted(agents, key=keys[sort]))


@router.get("/agents/{agent_id}", response_model=AgentOut)
async def get_agent(services: ServicesDep, agent_id: str) -> AgentOut:
    """One agent; 404 if it never heartbeated."""
    view = await services.registry.get(agent_id)
    stats = await services.store.get_stats(agent_id)
    return agent_out(view, None if stats is None else stats.value)


@router.get("/admin/api/agents/stats", response_model=AgentStatsListOut)
async def admin_stats(services: ServicesDep, caller: CallerDep) -> AgentStatsListOut:
    """Each agent's stats with task_success_ratio and latency p50/p90/max (admin only)."""
    caller.require()
    stats = await services.store.list_stats()
    return AgentStatsListOut(agents=[stats_out(a, v.value) for a, v in stats.items()])
