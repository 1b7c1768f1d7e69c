"""``/agents``: heartbeats, the registered agents with their stats, the directory."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Query, Request, Response
from pydantic import BaseModel

from agentladder.api.deps import MAX_OFFSET, CallerDep, ServicesDep
from agentladder.api.schemas import AgentOut, AgentStatsOut, agent_out, stats_out
from agentladder.domain.registry import AgentStatus
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.services.registry import AgentView
from agentladder.store.listing import AgentListingCache

__all__ = ["router"]

router = APIRouter(tags=["agents"])


class AgentsOut(BaseModel):
    """``{"agents": [...]}``."""

    agents: list[AgentOut]


class AgentStatsListOut(BaseModel):
    """``{"agents": [...]}`` with derived stats."""

    agents: list[AgentStatsOut]


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
async def list_agents(services: ServicesDep) -> Response:
    """Every registered agent with its declared fields, cost per round, status and stats."""
    return Response(await services.registry.listing_json(), media_type="application/json")


@router.get("/agents/directory", response_model=AgentsOut)
async def directory(
    services: ServicesDep,
    request: Request,
    tag: str | None = None,
    provider: str | None = None,
    min_rank: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    online: bool | None = None,
    sort: Literal["name", "rank", "avg_score", "cost"] = "name",
    limit: Annotated[int | None, Query(ge=1, le=10_000)] = None,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> Response:
    """The public directory, filtered by tag, provider, minimum rank and status, sorted;
    a page of it with ``limit`` and ``offset``.

    The tag and provider filters run in the store; stats are read for those left only.
    """
    views = await services.registry.list(tag=tag, provider=provider)
    if online is not None:
        views = [v for v in views if (v.status is AgentStatus.ONLINE) == online]
    if tag is None and provider is None:
        stats = await services.store.list_stats()
    else:
        stats = await services.store.get_many_stats([v.agent_id for v in views])
    none = AgentPerformanceStats()

    def of(view: AgentView) -> AgentPerformanceStats:
        found = stats.get(view.agent_id)
        return none if found is None else found.value

    if min_rank:
        views = [v for v in views if of(v).rank >= min_rank]
    keys: dict[str, Callable[[AgentView], tuple[Any, ...]]] = {
        "name": lambda v: (v.agent_id,),
        "rank": lambda v: (-of(v).rank, v.agent_id),
        "avg_score": lambda v: (-of(v).avg_score, v.agent_id),
        "cost": lambda v: (v.registration.config.estimated_cost_per_round, v.agent_id),
    }
    views.sort(key=keys[sort])
    page = views[offset:] if limit is None else views[offset : offset + limit]
    listing: AgentListingCache = request.app.state.listing
    body = listing.body([(v.registration, v.status) for v in page], stats, everyone=False)
    return Response(body, media_type="application/json")


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
