"""``/dashboard``: the agent table, leaderboards, agent pages, deliberations, the agent picker.

Pages are rendered on the server with Jinja2 (``api/templates``, autoescaped, shipped in
the wheel). Live refresh: an open page polls its own URL every 2 s and swaps the parts
marked ``data-live`` only when they changed (``static/dashboard.js``). The picker starts
a deliberation with ``POST /deliberation`` and follows it by polling
``GET /deliberation/{id}`` (``static/picker.js``). See ``docs/dashboard.md``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, PackageLoader, StrictUndefined
from pydantic import BaseModel

from agentladder.api.agent_calls import evaluations_of, latency_series
from agentladder.api.deps import ServicesDep
from agentladder.api.schemas import AgentOut, agent_out
from agentladder.domain.deliberation import Scope
from agentladder.domain.deliberation_record import (
    DeliberationRecord,
    DeliberationStatus,
    SideEffectState,
)
from agentladder.domain.levels import Level
from agentladder.domain.probation import OVERALL as ALL_TASKS
from agentladder.domain.probation import EffectiveRate, RateReason, streams_on_probation
from agentladder.domain.profile import AgentProfile
from agentladder.domain.rules import Complexity
from agentladder.domain.skill.board import SkillEntry, skill_board
from agentladder.domain.skill.state import OVERALL, AgentSkill
from agentladder.domain.stats import latency_p50, latency_p90, task_success_ratio
from agentladder.errors import NotFound
from agentladder.services.container import Services
from agentladder.services.deliberations.side_effects import outcomes_of
from agentladder.services.oracle.service import Oracle
from agentladder.store.records import LeaderboardRow

__all__ = ["POLL_MS", "AgentRow", "router", "templates"]

POLL_MS = 2000
"""How often an open page polls itself for its live parts, in milliseconds."""
LEADERBOARD_SIZE = 10
SKILL_SIZE = 30
DELIBERATIONS_PAGE = 50
AGENT_SCAN = 200
"""The agent page looks for the agent's deliberations among the newest this many."""
AGENT_DELIBERATIONS = 20
_LEDGER_PAGE = 1000


def _environment() -> Environment:
    env = Environment(loader=PackageLoader("agentladder.api", "templates"), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)  # fmt: skip
    env.filters.update(  # each shows a dash for None
        when=lambda at: (
            "—" if at is None else f"{datetime.fromtimestamp(at, UTC):%Y-%m-%d %H:%M:%S}"
        ),
        number=lambda value, digits=1: "—" if value is None else f"{value:.{digits}f}",
        percent=lambda ratio: "—" if ratio is None else f"{100 * ratio:.1f}%",
    )
    return env


templates = Jinja2Templates(env=_environment())
router = APIRouter(prefix="/dashboard", tags=["dashboard"], include_in_schema=False)


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


def _probation(profile: AgentProfile | None, oracle: Oracle) -> dict[str, EffectiveRate]:
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


class Board(BaseModel):
    """One leaderboard: overall (``task_type`` None) or for one task type."""

    task_type: str | None
    entries: list[LeaderboardRow]


async def _profiles(services: Services) -> dict[str, AgentProfile]:
    return {profile.id: profile for profile in await services.store.list_profiles()}


def _row(agent: AgentOut, profile: AgentProfile | None, oracle: Oracle) -> AgentRow:
    stats = agent.stats
    label, why = _probation_mark(_probation(profile, oracle))
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


async def _rows(services: Services, profiles: dict[str, AgentProfile]) -> list[AgentRow]:
    stats = await services.store.list_stats()
    agents = [
        agent_out(
            view,
            found.value if (found := stats.get(view.agent_id)) else None,
            services.health.tracked(view.agent_id),
        )
        for view in await services.registry.list()
    ]
    return [_row(agent, profiles.get(agent.name), services.oracle) for agent in agents]


class SkillBoard(BaseModel):
    """One skill board: overall (``task_type`` None) or for one task type."""

    task_type: str | None
    entries: list[SkillEntry]


async def _skill_boards(services: Services) -> list[SkillBoard]:
    """The overall board and one per task type with evidence."""
    skills = await services.store.list_skills()
    fleet = await services.store.get_fleet_skill()
    types = sorted({t for s in skills for t in s.types} | set(fleet.levels))
    now, rules = services.skill.now(), services.skill.rules
    return [
        SkillBoard(task_type=t, entries=skill_board(skills, fleet, t, now, rules)[:SKILL_SIZE])
        for t in (None, *types)
    ]


async def _boards(services: Services, profiles: dict[str, AgentProfile]) -> list[Board]:
    types = sorted({task for profile in profiles.values() for task in profile.specializations})
    return [
        Board(task_type=task, entries=await services.oracle.get_leaderboard(task, LEADERBOARD_SIZE))
        for task in (None, *types)
    ]


def _tags(rows: list[AgentRow]) -> list[str]:
    return sorted({tag for row in rows for tag in row.tags})


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
    ``{"labels": [...], "data": [times, series...]}`` (None where a series has no point)."""
    if skill is None or not skill.history:
        return {"labels": [], "data": [[]]}
    scopes = sorted({scope for _, scope, _, _ in skill.history}, key=lambda s: (s != OVERALL, s))
    times = sorted({at for at, _, _, _ in skill.history})
    column = {at: i for i, at in enumerate(times)}
    series: list[list[float | None]] = [[None] * len(times) for _ in scopes]
    where = {scope: i for i, scope in enumerate(scopes)}
    for at, scope, mean, _ in skill.history:
        series[where[scope]][column[at]] = round(min(10.0, max(0.0, mean)), 3)
    labels = ["overall" if scope == OVERALL else scope for scope in scopes]
    return {"labels": labels, "data": [times, *series]}


def settled(record: DeliberationRecord) -> bool:
    """Failed, or completed with its ranking, judgments and skill evidence applied (or
    skipped)."""
    done = (SideEffectState.APPLIED, SideEffectState.SKIPPED, SideEffectState.ABANDONED)
    effects = all(e.state in done for e in (record.ranking, record.judgments, record.skill))
    return record.status is DeliberationStatus.FAILED or (
        record.status is DeliberationStatus.COMPLETED and effects
    )


def _page(request: Request, name: str, **context: Any) -> HTMLResponse:
    return templates.TemplateResponse(request, name, {"poll_ms": POLL_MS, **context})


@router.get("", response_class=HTMLResponse)
async def index(request: Request, services: ServicesDep) -> HTMLResponse:
    """The agent table and the leaderboards, refreshed live."""
    profiles = await _profiles(services)
    rows = await _rows(services, profiles)
    boards = await _boards(services, profiles)
    return _page(
        request, "index.html", rows=rows, boards=boards, tags=_tags(rows),
        skill_boards=await _skill_boards(services),
    )  # fmt: skip


@router.get("/agents/{agent_id}", response_class=HTMLResponse)
async def agent_page(request: Request, services: ServicesDep, agent_id: str) -> HTMLResponse:
    """One agent: stats, specializations, achievements, XP and latency charts."""
    profiles = await _profiles(services)
    row = next((r for r in await _rows(services, profiles) if r.name == agent_id), None)
    profile = profiles.get(agent_id)
    if row is None and profile is None:
        raise NotFound("agent", agent_id)
    found = await services.store.get_stats(agent_id)
    latencies = [] if found is None else list(found.value.recent_latencies_ms)
    registration = await services.store.get_registration(agent_id)
    start = None if registration is None else registration.first_seen
    now = services.registry.clock.now().timestamp()
    skills = (await services.store.get_skills([agent_id])).get(agent_id)
    overall_skill, typed_skills = (
        (None, []) if skills is None else await services.skill.of_agent(agent_id)
    )
    recent = await services.orchestrator.list(limit=AGENT_SCAN)
    involved = [r for r in recent if agent_id in r.agents]
    mine = involved[:AGENT_DELIBERATIONS]
    calls = latency_series(agent_id, involved)
    return _page(
        request, "agent.html", agent_id=agent_id, row=row, profile=profile,
        deliberations=mine, scanned=len(recent),
        probation=_probation(profile, services.oracle),
        overall_skill=overall_skill, typed_skills=typed_skills,
        skill_series=skill_series(skills),
        stats=None if found is None else found.value,
        health=services.health.health(agent_id),
        evaluations=evaluations_of(agent_id, involved),
        xp_series=await xp_series(services, agent_id, start=start, end=now),
        latency_split=calls is not None,
        latency_series=calls or [list(range(1, len(latencies) + 1)), latencies],
    )  # fmt: skip


@router.get("/deliberations", response_class=HTMLResponse)
async def deliberations(
    request: Request, services: ServicesDep, offset: Annotated[int, Query(ge=0)] = 0
) -> HTMLResponse:
    """Deliberations, newest first, a page at a time."""
    records = await services.orchestrator.list(limit=DELIBERATIONS_PAGE, offset=offset)
    return _page(
        request, "deliberations.html", records=records, offset=offset, size=DELIBERATIONS_PAGE
    )


@router.get("/deliberations/new", response_class=HTMLResponse)
async def picker(request: Request, services: ServicesDep) -> HTMLResponse:
    """The agent picker: choose agents by tag, see the cost, start and follow a deliberation."""
    rows = await _rows(services, await _profiles(services))
    rounds = services.settings.orchestrator.scope_rounds
    scopes = {scope.value: rounds.get(scope.value, 1) for scope in Scope}
    return _page(
        request, "picker.html", rows=rows, tags=_tags(rows), scopes=scopes,
        default_scope=Scope.STANDARD.value, complexities=[c.value for c in Complexity],
    )  # fmt: skip


@router.get("/deliberations/{deliberation_id}", response_class=HTMLResponse)
async def deliberation_page(
    request: Request, services: ServicesDep, deliberation_id: str
) -> HTMLResponse:
    """One deliberation: rounds, proposals, evaluations, scores, ranking and judgments."""
    record = await services.orchestrator.get(deliberation_id)
    return _page(
        request, "deliberation.html", record=record, settled=settled(record),
        outcomes=outcomes_of(record) if record.rounds else {},
    )  # fmt: skip
