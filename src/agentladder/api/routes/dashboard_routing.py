"""``/dashboard/routing``: who to use, per task type: skill with its interval against cost
per round, the cost/quality frontier marked (``domain/routing/frontier.py``). The cost
axis is logarithmic when the fleet's prices span ten times or more, the skill axis fitted
to the intervals (``api/svg_axes.py``). A page of task types (``?types=OFFSET``, those
with the most agents first) and overall; the charts are computed on a CPU thread.

The agents are those ``POST /route`` chooses among: the registered ones and those known by
their evidence alone (imported history: no heartbeat, no declared prices: listed, not
plotted on the cost axis). Only an agent that can be used there is on the frontier
(``contender``): one with evidence at that task type, which the server can call now (a
backend it asks itself, or a heartbeat: online) and which is not down; a degraded one on
it is starred and says it is degraded; each row shows its health, and an agent left off
says why.

Above the charts, **Does routing pay?**: the routed gateway answers of the last 7 days
against always using each routing's reference, overall and per task type (the most
routed first, ``SAVINGS_ROWS`` of them), as ``GET /routing/savings`` computes them
(``services/routing/savings.py``), computed at most every 30 s (``RecentSavings``)."""

from __future__ import annotations

import math
import time

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel

from agentladder.api.deps import ServicesDep
from agentladder.api.render import TypesOffset, TypesShown, page, types_shown
from agentladder.api.routes.dashboard import evidence_weights
from agentladder.api.svg_axes import Axis, cost_axis, skill_axis
from agentladder.domain.registry import AgentStatus
from agentladder.domain.routing.frontier import frontier
from agentladder.domain.routing.health import AgentHealth, HealthStatus
from agentladder.domain.skill.board import SkillEntry, skill_view
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.state import AgentSkill, FleetSkill, new_skill
from agentladder.services.agents.registry import AgentView
from agentladder.services.offload import off_loop
from agentladder.services.routing.savings import DEFAULT_WINDOW_S, PANEL_MAX_AGE_S

__all__ = ["SAVINGS_ROWS", "contender", "router"]

router = APIRouter(prefix="/dashboard", tags=["dashboard"], include_in_schema=False)
WIDTH, HEIGHT, MARGIN = 640, 300, 40
SAVINGS_ROWS = 20
"""The task types the savings panel lists (the most routed first; the API lists all)."""


class Choice(BaseModel):
    """One agent at one task type, as the chart and the table show it."""

    agent_id: str
    skill: float
    low: float
    high: float
    observations: int
    provisional: bool
    cost: float | None  # None: no declared prices (known by its evidence only)
    online: bool
    registered: bool
    health: str  # ok, degraded or down
    health_why: str
    frontier: bool
    left_off: str  # why it cannot be on the frontier ('' when it can)
    x: float
    y: float
    y_low: float
    y_high: float


class Tick(BaseModel):
    """A labelled value on an axis, and its pixel."""

    label: str
    at: float


class TypeChoices(BaseModel):
    """Who to use at one task type (``task_type`` None: overall)."""

    task_type: str | None
    agents: list[Choice]
    frontier_points: str  # the polyline through the frontier, for the SVG
    skill_ticks: list[Tick]


def contender(observations: int, callable_now: bool, health: HealthStatus) -> str:
    """Why an agent cannot be on a task type's frontier, '' when it can: it needs evidence
    at that task type (``observations``: a prior alone shows nobody is better) and a way to
    be called now (``callable_now``: a backend the server asks, or online), and not down."""
    if observations == 0:
        return "no evidence here"
    if not callable_now:
        return "cannot be called: offline, and no backend this server asks"
    if health is HealthStatus.DOWN:
        return "down"
    return ""


def _choice(
    e: SkillEntry, cost: float | None, view: AgentView | None, health: AgentHealth, on: bool,
    left_off: str, x: Axis, y: Axis,
) -> Choice:  # fmt: skip
    return Choice(
        agent_id=e.agent_id, skill=e.skill, low=e.low, high=e.high,
        observations=e.observations, provisional=e.provisional, cost=cost,
        online=view is not None and view.status is AgentStatus.ONLINE,
        registered=view is not None, health=health.status.value, health_why=health.reason,
        frontier=on, left_off=left_off, x=x.at(cost or 0.0), y=y.at(e.skill), y_low=y.at(e.low),
        y_high=y.at(e.high),
    )  # fmt: skip


def _money(value: float) -> str:
    return f"${value:.{max(0, -math.floor(math.log10(value)))}f}" if value > 0 else "$0"


def _sections(
    views: dict[str, AgentView], skills: dict[str, AgentSkill], fleet: FleetSkill,
    types: list[str], health: dict[str, AgentHealth], now: float, rules: SkillRules,
    asked: frozenset[str],
) -> tuple[list[TypeChoices], Axis, list[Tick]]:  # fmt: skip
    """Each task type's chart and table, then overall (CPU work: on a CPU thread);
    ``asked``: the agents the server calls itself (a configured backend)."""
    ids = sorted(set(views) | set(skills))  # the registered, and those known by evidence
    costs = [v.registration.config.estimated_cost_per_round for v in views.values()]
    x = cost_axis(costs, MARGIN, WIDTH - MARGIN)
    cost_ticks = [Tick(label=_money(v), at=at) for v, at in x.ticks()]
    sections = []
    for task_type in (*types, None):
        agents = []
        for agent in ids:
            view = views.get(agent)
            entry = skill_view(
                skills.get(agent) or new_skill(agent, rules), fleet, task_type, now, rules
            )
            cost = None if view is None else view.registration.config.estimated_cost_per_round
            agents.append((view, entry, cost))
        left_off = {
            e.agent_id: contender(
                e.observations,
                e.agent_id in asked or (view is not None and view.status is AgentStatus.ONLINE),
                health[e.agent_id].status,
            )
            for view, e, _ in agents
        }
        on = set(
            frontier(
                (e.agent_id, e.low, cost)
                for _, e, cost in agents
                if cost is not None and not left_off[e.agent_id]
            )
        )  # only an agent with evidence here that can work now
        y = skill_axis([e.low for _, e, _ in agents], [e.high for _, e, _ in agents],
                       HEIGHT - MARGIN, MARGIN)  # fmt: skip
        choices = [
            _choice(e, cost, view, health[e.agent_id], e.agent_id in on, left_off[e.agent_id], x, y)
            for view, e, cost in agents
        ]
        choices.sort(key=lambda c: (c.cost is None, c.cost or 0.0, -c.low, c.agent_id))
        line = " ".join(f"{c.x},{c.y_low}" for c in choices if c.frontier)
        ticks = [Tick(label=f"{v:g}", at=at) for v, at in y.ticks()]
        sections.append(
            TypeChoices(
                task_type=task_type, agents=choices, frontier_points=line, skill_ticks=ticks
            )
        )
    return sections, x, cost_ticks


@router.get("/routing", response_class=HTMLResponse)
async def who_to_use(
    request: Request, services: ServicesDep, types: TypesOffset = 0
) -> HTMLResponse:
    """Per task type (a page of them) and overall: every agent's skill (95% interval)
    against its estimated cost per round."""
    views = {v.agent_id: v for v in await services.registry.list()}
    skills = {state.agent_id: state for state in await services.store.list_skills()}
    fleet = await services.store.get_fleet_skill()
    weights = await off_loop(evidence_weights, {}, list(skills.values()), fleet)
    shown: TypesShown = types_shown(weights, types)
    health = {agent: services.health.health(agent) for agent in set(views) | set(skills)}
    sections, x, cost_ticks = await off_loop(
        _sections, views, skills, fleet, shown.types, health, services.skill.now(),
        services.skill.rules, frozenset(services.providers),
    )  # fmt: skip
    savings = await services.savings.get(services.store, time.time())
    return await page(
        request, "routing.html", sections=sections, width=WIDTH, height=HEIGHT,
        margin=MARGIN, cost_ticks=cost_ticks, log_cost=x.log, shown=shown, savings=savings,
        savings_rows=savings.task_types[:SAVINGS_ROWS],
        savings_more=max(0, len(savings.task_types) - SAVINGS_ROWS),
        savings_days=DEFAULT_WINDOW_S / 86_400, savings_age_s=PANEL_MAX_AGE_S,
    )  # fmt: skip
