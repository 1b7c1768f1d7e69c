"""``/dashboard``: the agent table, leaderboards, agent pages, deliberations, the agent picker.

Pages are rendered on the server (``api/render.py``: Jinja2, autoescaped, off the event
loop). Live refresh: an open page polls its own URL every 2 s and swaps the parts marked
``data-live`` only when they changed (``static/dashboard.js``). The picker starts a
deliberation with ``POST /deliberation`` and follows it by polling
``GET /deliberation/{id}`` (``static/picker.js``). A page shows a page of task types
(``?types=OFFSET``: those with the most evidence first), whatever the number of task types
behind it. The rows, boards and series are computed on a CPU thread too
(``services/offload.py``). See ``docs/dashboard.md``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel

from agentladder.api.dashboard_rows import AgentRow, all_profiles, rows, tags_of
from agentladder.api.deps import ServicesDep, caller_of_request
from agentladder.api.render import POLL_MS, TypesOffset, page, types_shown
from agentladder.api.svg_axes import Axis, skill_axis
from agentladder.domain.agents import INPUT_TOKENS_PER_ROUND, OUTPUT_TOKENS_PER_ROUND
from agentladder.domain.deliberation import Scope
from agentladder.domain.deliberation_record import (
    DeliberationRecord,
    DeliberationStatus,
    SideEffectState,
)
from agentladder.domain.profile import AgentProfile
from agentladder.domain.rules import Complexity
from agentladder.domain.skill.board import SkillEntry, skill_board
from agentladder.domain.skill.judges import source_records
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.state import AgentSkill, FleetSkill
from agentladder.services.container import Services
from agentladder.services.deliberations.side_effects import outcomes_of
from agentladder.services.offload import off_loop
from agentladder.store.records import LeaderboardRow

__all__ = ["POLL_MS", "AgentRow", "evidence_weights", "router", "settled"]

LEADERBOARD_SIZE = 10
SKILL_SIZE = 30
JUDGES_SHOWN = 12
"""Sources of scores the index lists (the most evidence first; the rest: GET /skills/judges)."""
DELIBERATIONS_PAGE = 50

router = APIRouter(prefix="/dashboard", tags=["dashboard"], include_in_schema=False)


class Board(BaseModel):
    """One leaderboard: overall (``task_type`` None) or for one task type."""

    task_type: str | None
    entries: list[LeaderboardRow]


FOREST_LEFT, FOREST_RIGHT = 150.0, 392.0
"""Where a forest plot's skill axis runs, in its 420-wide viewBox (names to the left, the
tier to the right)."""


class SkillBoard(BaseModel):
    """One skill board: overall (``task_type`` None) or for one task type, with its skill
    axis fitted to the intervals shown (``api/svg_axes.py``)."""

    task_type: str | None
    entries: list[SkillEntry]
    axis: Axis

    def ticks(self) -> list[tuple[str, float]]:
        """The axis's labelled values, as text, and their x."""
        return [(f"{value:g}", x) for value, x in self.axis.ticks()]


def evidence_weights(
    profiles: Mapping[str, AgentProfile], skills: Sequence[AgentSkill], fleet: FleetSkill
) -> Counter[str]:
    """Per task type, the agents with evidence in it (a specialization or a skill
    estimate; a type only the fleet's level knows counts one): the order a page shows
    task types in."""
    pairs = {(agent, t) for agent, p in profiles.items() for t in p.specializations}
    pairs |= {(skill.agent_id, t) for skill in skills for t in skill.types}
    weights = Counter(t for _, t in pairs)
    weights.update(t for t in fleet.levels if t not in weights)
    return weights


def unscored(profiles: Mapping[str, AgentProfile]) -> set[tuple[str, str | None]]:
    """``(agent, task type)`` (None: overall) where the agent was judged without a score
    ever: its average score there is "—", not 0.00."""
    found: set[tuple[str, str | None]] = set()
    for agent, profile in profiles.items():
        if profile.stats.scored_tasks == 0:
            found.add((agent, None))
        found |= {(agent, t) for t, s in profile.specializations.items() if s.scored_tasks == 0}
    return found


def _skill_boards_of(
    skills: list[AgentSkill], fleet: FleetSkill, types: Sequence[str], now: float,
    rules: SkillRules,
) -> list[SkillBoard]:  # fmt: skip
    boards = []
    for task_type in (None, *types):
        entries = skill_board(skills, fleet, task_type, now, rules)[:SKILL_SIZE]
        lows, highs = [e.low for e in entries], [e.high for e in entries]
        axis = skill_axis(lows, highs, FOREST_LEFT, FOREST_RIGHT)
        boards.append(SkillBoard(task_type=task_type, entries=entries, axis=axis))
    return boards


async def _boards(services: Services, types: Sequence[str]) -> list[Board]:
    return [
        Board(task_type=task, entries=await services.oracle.get_leaderboard(task, LEADERBOARD_SIZE))
        for task in (None, *types)
    ]


def settled(record: DeliberationRecord) -> bool:
    """Failed, or completed with its ranking, judgments and skill evidence applied (or
    skipped)."""
    done = (SideEffectState.APPLIED, SideEffectState.SKIPPED, SideEffectState.ABANDONED)
    effects = all(e.state in done for e in (record.ranking, record.judgments, record.skill))
    return record.status is DeliberationStatus.FAILED or (
        record.status is DeliberationStatus.COMPLETED and effects
    )


@router.get("", response_class=HTMLResponse)
async def index(request: Request, services: ServicesDep, types: TypesOffset = 0) -> HTMLResponse:
    """The agent table and the leaderboards, refreshed live; the boards of a page of task
    types (those with the most agents first)."""
    profiles = await all_profiles(services)
    agents = await rows(services, profiles)
    skills = await services.store.list_skills()
    fleet = await services.store.get_fleet_skill()
    weights = await off_loop(evidence_weights, profiles, skills, fleet)
    shown = types_shown(weights, types)
    now, rules = services.skill.now(), services.skill.rules
    skill_boards = await off_loop(_skill_boards_of, skills, fleet, shown.types, now, rules)
    clients = caller_of_request(request).may("admin")  # the gateway's clients: docs/gateway.md
    judges = await off_loop(source_records, fleet, skills, clients=clients)
    return await page(
        request, "index.html", rows=agents, boards=await _boards(services, shown.types),
        tags=tags_of(agents), skill_boards=skill_boards, shown=shown,
        unscored=await off_loop(unscored, profiles),
        freshness=await services.skill.freshness(fleet), judges=judges[:JUDGES_SHOWN],
        judges_more=max(0, len(judges) - JUDGES_SHOWN),
    )  # fmt: skip


@router.get("/deliberations", response_class=HTMLResponse)
async def deliberations(
    request: Request, services: ServicesDep, offset: Annotated[int, Query(ge=0)] = 0
) -> HTMLResponse:
    """Deliberations, newest first, a page at a time."""
    records = await services.orchestrator.list(limit=DELIBERATIONS_PAGE, offset=offset)
    return await page(
        request, "deliberations.html", records=records, offset=offset, size=DELIBERATIONS_PAGE,
        now=services.registry.clock.now().timestamp(),
    )  # fmt: skip


@router.get("/deliberations/new", response_class=HTMLResponse)
async def picker(request: Request, services: ServicesDep) -> HTMLResponse:
    """The agent picker: choose agents by tag, see the cost, start and follow a deliberation."""
    agents = await rows(services, await all_profiles(services))
    rounds = services.settings.orchestrator.scope_rounds
    scopes = {scope.value: rounds.get(scope.value, 1) for scope in Scope}
    return await page(
        request, "picker.html", rows=agents, tags=tags_of(agents), scopes=scopes,
        default_scope=Scope.STANDARD.value, complexities=[c.value for c in Complexity],
        tokens_in=INPUT_TOKENS_PER_ROUND, tokens_out=OUTPUT_TOKENS_PER_ROUND,
    )  # fmt: skip


@router.get("/deliberations/{deliberation_id}", response_class=HTMLResponse)
async def deliberation_page(
    request: Request, services: ServicesDep, deliberation_id: str
) -> HTMLResponse:
    """One deliberation: rounds, proposals, evaluations, scores, ranking (with the promotion
    explained), judgments, and who did what."""
    record = await services.orchestrator.get(deliberation_id)
    found = outcomes_of(record) if record.rounds else {}  # one record's: small
    return await page(
        request, "deliberation.html", record=record, settled=settled(record), outcomes=found
    )
