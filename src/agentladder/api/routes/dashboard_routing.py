"""``/dashboard/routing``: who to use, per task type: skill with its interval against cost
per round, the cost/quality frontier marked (``domain/routing/frontier.py``)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel

from agentladder.api.deps import ServicesDep
from agentladder.api.routes.dashboard import POLL_MS, templates
from agentladder.domain.registry import AgentStatus
from agentladder.domain.routing.frontier import frontier
from agentladder.domain.skill.board import SkillEntry, skill_view
from agentladder.domain.skill.state import new_skill

__all__ = ["router"]

router = APIRouter(prefix="/dashboard", tags=["dashboard"], include_in_schema=False)
WIDTH, HEIGHT, MARGIN = 640, 300, 40


class Choice(BaseModel):
    """One agent at one task type, as the chart and the table show it."""

    agent_id: str
    skill: float
    low: float
    high: float
    observations: int
    cost: float
    online: bool
    cooling: bool
    frontier: bool
    x: float
    y: float
    y_low: float
    y_high: float


class TypeChoices(BaseModel):
    """Who to use at one task type (``task_type`` None: overall)."""

    task_type: str | None
    agents: list[Choice]
    frontier_points: str  # the polyline through the frontier, for the SVG


def _y(value: float) -> float:
    return round(HEIGHT - MARGIN - value / 10.0 * (HEIGHT - 2 * MARGIN), 1)


def _choice(
    e: SkillEntry, cost: float, online: bool, cooling: bool, on: bool, span: float
) -> Choice:
    return Choice(
        agent_id=e.agent_id, skill=e.skill, low=e.low, high=e.high,
        observations=e.observations, cost=cost, online=online, cooling=cooling, frontier=on,
        x=round(MARGIN + cost / span * (WIDTH - 2 * MARGIN), 1),
        y=_y(e.skill), y_low=_y(e.low), y_high=_y(e.high),
    )  # fmt: skip


@router.get("/routing", response_class=HTMLResponse)
async def who_to_use(request: Request, services: ServicesDep) -> HTMLResponse:
    """Per task type: every agent's skill (95% interval) against its cost per round."""
    views = await services.registry.list()
    ids = [v.agent_id for v in views]
    skills = await services.store.get_skills(ids)
    fleet = await services.store.get_fleet_skill()
    types = sorted({t for s in skills.values() for t in s.types} | set(fleet.levels))
    now, rules = services.skill.now(), services.skill.rules
    cooling = services.health.cooling()
    top = max((v.registration.config.estimated_cost_per_round for v in views), default=0.0)
    span = top or 1.0
    sections = []
    for task_type in (*types, None):
        agents = []
        for view in views:
            entry = skill_view(
                skills.get(view.agent_id) or new_skill(view.agent_id, rules), fleet, task_type,
                now, rules,
            )  # fmt: skip
            cost = view.registration.config.estimated_cost_per_round
            agents.append((view, entry, cost))
        on = set(frontier((e.agent_id, e.low, cost) for _, e, cost in agents))
        choices = [
            _choice(e, cost, view.status is AgentStatus.ONLINE, e.agent_id in cooling,
                    e.agent_id in on, span)
            for view, e, cost in agents
        ]  # fmt: skip
        choices.sort(key=lambda c: (c.cost, -c.low, c.agent_id))
        line = " ".join(f"{c.x},{c.y_low}" for c in choices if c.frontier)
        sections.append(TypeChoices(task_type=task_type, agents=choices, frontier_points=line))
    return templates.TemplateResponse(
        request, "routing.html",
        {"poll_ms": POLL_MS, "sections": sections, "width": WIDTH, "height": HEIGHT,
         "margin": MARGIN, "top_cost": top},
    )  # fmt: skip
