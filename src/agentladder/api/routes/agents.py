"""``/agents``: heartbeats, the registered agents with their stats, the directory."""

from __future__ import annotations

import dataclasses
import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Query, Request, Response
from pydantic import BaseModel

from agentladder.api.deps import MAX_OFFSET, AgentDep, CallerDep, ServicesDep
from agentladder.api.paging import PageOut, page_of
from agentladder.api.routes.skills import SkillAsOfOut, freshness_out
from agentladder.api.schemas import AgentOut, AgentStatsOut, agent_out, stats_out, with_health
from agentladder.domain.routing.health import Cooldown
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.domain.text import VisibleStr
from agentladder.errors import NotFound
from agentladder.services.oracle.known import not_found
from agentladder.store.records import DirectoryQuery

__all__ = ["router"]

router = APIRouter(tags=["agents"])


class AgentsOut(BaseModel):
    """``{"agents": [...]}``."""

    agents: list[AgentOut]


class DirectoryOut(BaseModel):
    """``{"agents": [...], "page": {...}}``."""

    agents: list[AgentOut]
    page: PageOut


class AgentStatsListOut(BaseModel):
    """``{"agents": [...]}`` with derived stats."""

    agents: list[AgentStatsOut]


@router.post("/agents/heartbeat", response_model=AgentOut)
async def heartbeat(
    services: ServicesDep, caller: AgentDep, payload: Annotated[dict[str, Any], Body()]
) -> AgentOut:
    """An agent's heartbeat: its declared fields. Rank, stats, XP or level: refused (422)."""
    as_agent = caller.agent_id if caller.role == "agent" else None
    view = await services.registry.heartbeat(payload, as_agent=as_agent)
    stats = await services.store.get_stats(view.agent_id)
    health = services.health.tracked(view.agent_id)
    return agent_out(view, None if stats is None else stats.value, health)


@router.get("/agents", response_model=AgentsOut)
async def list_agents(services: ServicesDep) -> Response:
    """Every registered agent with its declared fields, cost per round, status (its
    heartbeat), stats and health (its provider calls: ok, degraded or down)."""
    body = with_health(await services.registry.listing_json(), services.health.tracked)
    return Response(body, media_type="application/json")


@router.get("/agents/directory", response_model=DirectoryOut)
async def directory(
    services: ServicesDep,
    request: Request,
    tag: Annotated[VisibleStr | None, Query()] = None,
    provider: Annotated[VisibleStr | None, Query()] = None,
    min_rank: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    online: bool | None = None,
    sort: Literal["name", "rank", "avg_score", "cost"] = "name",
    limit: Annotated[int | None, Query(ge=1, le=10_000)] = None,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> Response:
    """The public directory, filtered by tag, provider, minimum rank and status, sorted;
    a page of it with ``limit`` and ``offset`` (``store/directory.py``): built by the
    store, on SQLite in one query. Without ``limit``, every agent from ``offset`` on,
    the store's bytes answered as they are; with it, one agent more is read to tell
    whether a next page follows."""
    query = DirectoryQuery(
        tag=tag, provider=provider, min_rank=min_rank, online=online, sort=sort, limit=limit,
        offset=offset,
    )  # fmt: skip
    if limit is None:
        whole = with_health(await services.registry.directory_json(query), services.health.tracked)
        page = PageOut(offset=offset, limit=None, next=None).model_dump_json().encode()
        body = whole.rstrip()[:-1] + b',"page":' + page + b"}"  # inside {"agents":[...]}
        return Response(body, media_type="application/json")
    more = dataclasses.replace(query, limit=limit + 1)
    listed = with_health(await services.registry.directory_json(more), services.health.tracked)
    read = json.loads(listed)["agents"]
    links = Response()
    agents, found = page_of(request, links, read, offset=offset, limit=limit)
    encoded = json.dumps({"agents": agents, "page": found.model_dump()}, separators=(",", ":"))
    headers = {"Link": links.headers["Link"]} if found.next else None
    return Response(encoded.encode(), media_type="application/json", headers=headers)


class AgentDetailOut(AgentOut):
    """One agent, with its overall skill (the evidence model's estimate) beside its stats
    and health, and the down period in force when it has an end (``cooldown``)."""

    skill: SkillAsOfOut
    cooldown: Cooldown | None = None


@router.get("/agents/{agent_id}", response_model=AgentDetailOut)
async def get_agent(services: ServicesDep, agent_id: str) -> AgentDetailOut:
    """One agent; 404 if it never heartbeated (offering the closest known ids)."""
    try:
        view = await services.registry.get(agent_id)
    except NotFound:
        raise await not_found("agent", agent_id, services.oracle.known) from None
    stats = await services.store.get_stats(agent_id)
    fleet = await services.store.get_fleet_skill()
    skill = (await services.skill.overall([agent_id]))[agent_id]
    shown = SkillAsOfOut(
        **skill.model_dump(), **freshness_out(await services.skill.freshness(fleet))
    )
    base = agent_out(view, None if stats is None else stats.value, services.health.health(agent_id))
    cooldown = services.health.cooldown(agent_id)
    return AgentDetailOut.model_construct(**dict(base), skill=shown, cooldown=cooldown)


@router.get("/admin/api/agents/stats", response_model=AgentStatsListOut)
async def admin_stats(services: ServicesDep, caller: CallerDep) -> AgentStatsListOut:
    """Each agent's stats with task_success_ratio and latency p50/p90/max (admin only):
    every registered agent, as ``GET /agents`` lists them (zeros before its first
    deliberation), and any other agent with stats; by name."""
    caller.require(what="GET /admin/api/agents/stats")
    stats = await services.store.list_stats()
    registered = [view.agent_id for view in await services.registry.list()]
    names = sorted({*registered, *stats})
    return AgentStatsListOut(
        agents=[
            stats_out(a, found.value if (found := stats.get(a)) else AgentPerformanceStats())
            for a in names
        ]
    )
