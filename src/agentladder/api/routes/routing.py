"""``POST /route``: the agents routing would choose for a task, without running anything."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from agentladder.api.deps import CheckedJson, Role, ServicesDep
from agentladder.domain.routing.spec import NotChosen, Pick, Reference, RouteSpec, Strategy
from agentladder.domain.rules import Complexity
from agentladder.services.routing.service import require_enough

__all__ = ["RouteOut", "RouteRequest", "router"]

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
        excluded=routing.excluded, unlisted=routing.unlisted,
    )  # fmt: skip
