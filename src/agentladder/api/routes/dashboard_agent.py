"""``/dashboard/agents/{agent_id}``: one agent's stats, its health (from the calls this
instance made to its provider, apart from its heartbeat) and the evaluations it failed, a
page of its task types (its specializations and skills there, those with the most evidence
first, ``?types=OFFSET``), achievements, and its XP, skill and latency charts (the calls
that failed plotted apart)."""

from __future__ import annotations

import math
from collections import Counter
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel

from agentladder.api.agent_calls import evaluations_of, latency_series
from agentladder.api.dashboard_rows import AgentRow, agent_row, probation_of
from agentladder.api.deps import ServicesDep
from agentladder.api.render import TypesOffset, TypesShown, page, types_shown
from agentladder.api.schemas import agent_out
from agentladder.domain.agents import validate_agent_name
from agentladder.domain.profile import AgentProfile, Specialization
from agentladder.domain.skill.board import SkillEntry, skill_view
from agentladder.domain.skill.gauss import on_scale
from agentladder.domain.skill.live import overall_types
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.state import OVERALL, AgentSkill, FleetSkill
from agentladder.errors import InvalidInput, NotFound
from agentladder.services.container import Services
from agentladder.services.offload import off_loop
from agentladder.services.oracle.known import not_found

__all__ = ["AGENT_TYPES", "router", "skill_series", "xp_series"]

AGENT_SCAN = 200
"""The agent page reads the agent's own newest this many deliberations from the store (its
latency chart and failed evaluations come from them)."""
AGENT_DELIBERATIONS = 20
"""Of those, the agent page lists this many."""
AGENT_TYPES = 50
"""Task types an agent's page lists at once (its specializations and skills)."""
_LEDGER_PAGE = 1000

router = APIRouter(prefix="/dashboard", tags=["dashboard"], include_in_schema=False)


def _epoch(stamp: str) -> float | None:
    """An xp_history timestamp (ISO 8601, UTC when naive) as unix seconds."""
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


async def xp_series(
    services: Services, agent_id: str, *, start: float | None = None, end: float | None = None
) -> list[list[float]]:
    """Cumulative XP by timestamp from the whole xp_history ledger: ``[times, totals]``.

    One point per distinct second; with ``start`` (first seen) a 0 before the first award
    (at least a second before: the ledger keeps whole seconds), with ``end`` (now) the total
    again, so the steps span the agent's life.
    """
    times: list[float] = []
    totals: list[float] = []
    total, offset = 0, 0
    while True:
        page = await services.store.ledger(agent_id, offset=offset, limit=_LEDGER_PAGE)
        for entry in page:
            total += entry.xp_awarded
            at = _epoch(entry.timestamp)
            if at is None:
                continue
            if times and at <= times[-1]:  # same second (or a clock step back): one point
                totals[-1] = total
            else:
                times.append(at)
                totals.append(total)
        if len(page) < _LEDGER_PAGE:
            break
        offset += _LEDGER_PAGE
    if start is not None:
        times.insert(0, min(start, times[0] - 1) if times else start)
        totals.insert(0, 0)
    if end is not None and times and end > times[-1]:
        times.append(end)
        totals.append(total)
    return [times, totals]


def skill_series(skill: AgentSkill | None) -> dict[str, Any]:
    """The agent's skill after each update, overall and per task type, for one chart:
    ``{"labels": [...], "data": [times, series...]}`` (None where a series has no point).
    Each is drawn as the table shows it: a task type's point restricted to the scale
    (``gauss.on_scale``), the overall's as kept (the overall shown at that moment)."""
    if skill is None or not skill.history:
        return {"labels": [], "data": [[]]}
    scopes = sorted({scope for _, scope, _, _ in skill.history}, key=lambda s: (s != OVERALL, s))
    times = sorted({at for at, _, _, _ in skill.history})
    column = {at: i for i, at in enumerate(times)}
    series: list[list[float | None]] = [[None] * len(times) for _ in scopes]
    where = {scope: i for i, scope in enumerate(scopes)}
    for at, scope, mean, sd in skill.history:
        value = mean
        if scope != OVERALL and math.isfinite(mean) and math.isfinite(sd) and sd > 0.0:
            value = on_scale(mean, sd, 1.96)[0]  # the mean restricted to the scale
        series[where[scope]][column[at]] = round(min(10.0, max(0.0, value)), 3)
    labels = ["overall" if scope == OVERALL else scope for scope in scopes]
    return {"labels": labels, "data": [times, *series]}


async def _agent_row(
    services: Services, agent_id: str, profile: AgentProfile | None
) -> AgentRow | None:
    """The agent's row, None when it never heartbeated."""
    try:
        view = await services.registry.get(agent_id)
    except NotFound:
        return None
    stats = await services.store.get_stats(agent_id)
    health = services.health.tracked(agent_id)
    agent = agent_out(view, None if stats is None else stats.value, health)
    return agent_row(agent, profile, services.oracle)


class AgentTypes(BaseModel):
    """A page of an agent's task types: its specializations and skill estimates there."""

    shown: TypesShown
    specializations: list[tuple[str, Specialization]]
    skills: list[SkillEntry]
    overall: SkillEntry | None
    averaged: int  # the task types overall is the mean over
    predicted: int  # of those, the ones the agent has not done (at their prediction)


def _agent_types(
    profile: AgentProfile | None, skill: AgentSkill | None, fleet: FleetSkill, offset: int,
    now: float, rules: SkillRules,
) -> AgentTypes:  # fmt: skip
    """The task types with the most evidence first (judged tasks plus observations)."""
    weights: Counter[str] = Counter()
    specs = {} if profile is None else profile.specializations
    weights.update({t: spec.tasks_judged for t, spec in specs.items()})
    estimates = {} if skill is None else skill.types
    weights.update({t: estimate.n for t, estimate in estimates.items()})
    for task_type in (*specs, *estimates):
        weights[task_type] += 0  # listed, even without evidence counted
    shown = types_shown(weights, offset, AGENT_TYPES)
    averaged = [] if skill is None else overall_types(skill, fleet)
    return AgentTypes(
        shown=shown,
        specializations=[(t, specs[t]) for t in shown.types if t in specs],
        skills=[
            skill_view(skill, fleet, t, now, rules) for t in shown.types if skill and t in estimates
        ],
        overall=None if skill is None else skill_view(skill, fleet, None, now, rules),
        averaged=len(averaged),
        predicted=len([t for t in averaged if t not in estimates]),
    )


@router.get("/agents/{agent_id}", response_class=HTMLResponse)
async def agent_page(
    request: Request, services: ServicesDep, agent_id: str, types: TypesOffset = 0
) -> HTMLResponse:
    """One agent: stats, a page of its specializations and skills (the task types with the
    most evidence first), achievements, XP, skill and latency charts."""
    try:
        found_profile = await services.store.get_profile(validate_agent_name(agent_id))
    except InvalidInput:
        raise await not_found("agent", agent_id, services.oracle.known) from None
    profile = None if found_profile is None else found_profile.value
    row = await _agent_row(services, agent_id, profile)
    if row is None and profile is None:
        raise await not_found("agent", agent_id, services.oracle.known)
    found = await services.store.get_stats(agent_id)
    latencies = [] if found is None else list(found.value.recent_latencies_ms)
    registration = await services.store.get_registration(agent_id)
    start = None if registration is None else registration.first_seen
    now = services.registry.clock.now().timestamp()
    skills = (await services.store.get_skills([agent_id])).get(agent_id)
    fleet = await services.store.get_fleet_skill()
    typed = await off_loop(
        _agent_types, profile, skills, fleet, types, services.skill.now(), services.skill.rules
    )
    involved = await services.orchestrator.list(limit=AGENT_SCAN, agent=agent_id)
    mine = involved[:AGENT_DELIBERATIONS]
    calls = await off_loop(latency_series, agent_id, involved)
    evaluations = await off_loop(evaluations_of, agent_id, involved)
    return await page(
        request, "agent.html", agent_id=agent_id, row=row, profile=profile,
        deliberations=mine, scanned=len(involved), scan_limit=AGENT_SCAN,
        probation=probation_of(profile, services.oracle),
        overall_skill=typed.overall, typed_skills=typed.skills, averaged=typed.averaged,
        predicted=typed.predicted,
        specializations=typed.specializations, shown=typed.shown,
        skill_series=skill_series(skills), freshness=await services.skill.freshness(fleet),
        stats=None if found is None else found.value,
        health=services.health.health(agent_id), evaluations=evaluations,
        xp_series=await xp_series(services, agent_id, start=start, end=now),
        latency_split=calls is not None,
        latency_series=calls or [list(range(1, len(latencies) + 1)), latencies],
    )  # fmt: skip
