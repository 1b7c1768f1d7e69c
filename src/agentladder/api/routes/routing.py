"""``POST /route``: the agents routing would choose for a task, without running anything;
``GET /routing/savings``: whether routing paid on the gateway's traffic."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, ConfigDict, Field

from agentladder.api.deps import CheckedJson, Role, ServicesDep
from agentladder.domain.routing.savings import RESAMPLES
from agentladder.domain.routing.spec import (
    MAX_SEED,
    NotChosen,
    Pick,
    Reference,
    RouteSpec,
    Strategy,
)
from agentladder.domain.rules import Complexity
from agentladder.services.routing.savings import (
    DEFAULT_LIMIT,
    DEFAULT_WINDOW_S,
    MAX_LIMIT,
    SavingsReport,
    routing_savings,
)
from agentladder.services.routing.service import require_enough

__all__ = ["RouteOut", "RouteRequest", "router"]

MAX_WINDOW_S = 3650 * 86_400.0
"""The longest window (``gateway.feedback_days`` at most: records are kept no longer)."""

router = APIRouter(tags=["routing"])


class RouteRequest(RouteSpec):
    """The fields of ``select``, and the complexity and minimum rank of the task."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    complexity: Complexity | None = None
    min_agent_rank: int = Field(default=0, ge=0)
    online_only: bool = Field(
        default=False,
        description="only agents heartbeating now; false (the default): also agents known by"
        " their evidence (imported history, no heartbeat), since the caller runs the work",
    )


class RouteOut(BaseModel):
    """The chosen agents, best first, with why; the others with why not."""

    strategy: Strategy
    task_type: str | None
    seed: int = Field(description="repeat the same choice by sending it back")
    explore_slots: int
    quality_floor: float | None = Field(
        default=None,
        description="cheapest_above: the floor applied (a quality_floor_share: that share of"
        " the reference's skill)",
    )
    quality_floor_share: float | None = None
    confidence: float | None = Field(
        default=None, description="cheapest_above: the probability of clearing it asked"
    )
    reference: Reference | None = Field(
        default=None,
        description="the best available agent: the highest lower bound among those that pass"
        " every rule but the floor",
    )
    estimated_cost_per_round: float = Field(description="the chosen agents together")
    agents: list[Pick]
    excluded: list[NotChosen]
    unlisted: int = Field(description="agents left out beyond routing.max_listed_excluded")
    warnings: list[str] = Field(
        default_factory=list,
        description="what the caller should know, one line each: no agent has evidence at"
        " the task type (routed on predicted skill: a new task type routes from its first"
        " request), with the closest known task types (did you mean?)",
    )


@router.post(
    "/route",
    response_model=RouteOut,
    dependencies=[Depends(Role("orchestrator")), CheckedJson],
)
async def recommend(services: ServicesDep, request: RouteRequest) -> RouteOut:
    """The agents to give a task to, chosen like ``select`` in ``POST /deliberation``
    among every agent (not only those this server can ask; without ``online_only``, also
    those known by their evidence alone); nothing is stored or run. 400
    ``too_few_agents`` with every excluded agent when fewer than ``count`` qualify."""
    spec = RouteSpec.model_validate(
        request.model_dump(exclude={"complexity", "min_agent_rank", "online_only"})
    )
    routing = await services.routing.route(
        spec, complexity=request.complexity, min_rank=request.min_agent_rank,
        online_only=request.online_only,
    )  # fmt: skip
    require_enough(routing, spec.count, "the routing")
    return RouteOut(
        strategy=routing.strategy, task_type=routing.task_type, seed=routing.seed,
        explore_slots=routing.explore_slots, quality_floor=routing.quality_floor,
        quality_floor_share=routing.quality_floor_share, confidence=routing.confidence,
        reference=routing.reference,
        estimated_cost_per_round=routing.estimated_cost_per_round, agents=routing.agents,
        excluded=routing.excluded, unlisted=routing.unlisted, warnings=routing.warnings,
    )  # fmt: skip


@router.get("/routing/savings", response_model=SavingsReport)
async def routing_savings_of(
    services: ServicesDep,
    window_s: Annotated[
        float, Query(gt=0, le=MAX_WINDOW_S, description="the window: the last this many seconds")
    ] = DEFAULT_WINDOW_S,
    limit: Annotated[
        int, Query(ge=1, le=MAX_LIMIT, description="the most served records read, newest first")
    ] = DEFAULT_LIMIT,
    resamples: Annotated[int, Query(ge=100, le=10_000)] = RESAMPLES,
    seed: Annotated[int, Query(ge=0, le=MAX_SEED, description="the resamples' seed")] = 0,
) -> SavingsReport:
    """Whether routing paid on the gateway's traffic: per task type and overall, what the
    routed answers cost and how they were judged, against always using the best single
    agent (each routing's reference), with 95% bootstrap intervals (docs/routing.md,
    "Does routing pay?"). The window is the wall clock's, as the gateway's records are."""
    return await routing_savings(
        services.store, now=time.time(), window_s=window_s, limit=limit,
        resamples=resamples, seed=seed,
    )  # fmt: skip
