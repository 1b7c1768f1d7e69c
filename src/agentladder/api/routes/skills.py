"""``/skills``: the evidence model's estimates, per task type and overall, in tiers, each
answer with how fresh it is (``FreshnessOut``); ``?fresh=true`` fits first (admin only:
docs/api.md). ``POST /skills/fit``: ``skill_fit.py``; ``GET /skills/judges``:
``skill_judges.py``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from agentladder.api.auth import Caller
from agentladder.api.deps import CallerDep, ServicesDep
from agentladder.domain.judgment import TASK_TYPE_PATTERN
from agentladder.domain.skill.board import SkillEntry
from agentladder.domain.skill.capped import FEEDBACK_SOURCE
from agentladder.errors import NotFound
from agentladder.services.container import Services
from agentladder.services.oracle.known import not_found
from agentladder.services.skill.freshness import Freshness

__all__ = [
    "AgentSkillsOut",
    "FreshnessOut",
    "SkillAsOfOut",
    "SkillBoardOut",
    "SkillOut",
    "fitted_first",
    "freshness_out",
    "router",
    "skill_out",
]

router = APIRouter(tags=["skills"])


class SkillOut(BaseModel):
    """One agent's skill at one task type (``task_type`` null: overall, the mean of its
    task types as shown), on the 0-10 score scale: the posterior mean, its sd, the 95%
    interval, the observations behind it, whether it is still provisional (sd above
    ``skill.provisional_sd``) and its tier on the board among the settled agents (1: the
    best and the agents after it down to the clearest break before the first one the
    evidence separates from it; null for a provisional estimate: docs/skill.md)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent_id: str
    task_type: str | None
    skill: float
    sd: float
    low: float
    high: float
    observations: int
    provisional: bool
    tier: int | None = None


class FreshnessOut(BaseModel):
    """How fresh a skill answer is (docs/skill.md, "Between two fits")."""

    fitted_at: float | None = Field(
        default=None,
        description="when the last fit ran (seconds since the epoch); null before the first",
    )
    pending: int = Field(
        default=0,
        description="skill events stored after the last fit: evidence that awaits the next"
        " fit (each moved the estimates by one filter step, history and feedback by none)",
    )
    next_fit_within_s: float | None = Field(
        default=None,
        description="seconds until this instance's fitter next fits them (0: a fit runs);"
        " null when nothing is pending",
    )


def freshness_out(freshness: Freshness) -> dict[str, float | int | None]:
    """The fields of ``FreshnessOut`` of a service's ``Freshness``."""
    return {
        "fitted_at": freshness.fitted_at,
        "pending": freshness.pending,
        "next_fit_within_s": freshness.next_fit_within_s,
    }


class SkillAsOfOut(SkillOut, FreshnessOut):
    """One estimate with how fresh it is (``GET /agents/{agent_id}``'s ``skill``)."""


class ScaleSource(BaseModel):
    """One source of scores and its share of a task type's scale."""

    source: str = Field(description="agent:<id>, judge:<name> or aggregate")
    share: float = Field(description="its share of the evidence at the task type (0-1)")


class ScaleOut(BaseModel):
    """What a task type's skills are measured against: the evidence-weighted average score
    of its sources (with one judge, that judge's scale), as of the last fit."""

    task_type: str
    sources: list[ScaleSource] = Field(description="the largest shares, at most three")


class SkillBoardOut(FreshnessOut):
    """``GET /skills``: the board of one task type, or overall."""

    task_type: str | None
    entries: list[SkillOut] = Field(
        description="the settled agents best first, in tiers; then the provisional ones best"
        " first, with tier null"
    )
    scale: list[ScaleOut] = Field(
        default_factory=list,
        description="the scale of each task type the board covers (every one, overall)",
    )


class AgentSkillsOut(FreshnessOut):
    """``GET /agents/{agent_id}/skills``: overall, at every task type it has evidence in,
    and at the fleet's other task types as predicted; overall is the mean of the skills
    of ``task_types`` and ``predicted``."""

    agent_id: str
    overall: SkillOut
    task_types: list[SkillOut]
    predicted: list[SkillOut] = Field(
        default_factory=list,
        description="the fleet's task types the agent has no evidence at, as predicted from"
        " its general ability (0 observations)",
    )


def skill_out(entry: SkillEntry) -> SkillOut:
    """The API's view of an estimate."""
    return SkillOut(**entry.model_dump())


def _named(shares: Iterable[tuple[str, float]]) -> list[tuple[str, float]]:
    """A scale's sources as a public page may name them: the gateway's clients (whose
    names are for admins: docs/gateway.md) as one source, ``judge:feedback``."""
    named: dict[str, float] = {}
    for name, share in shares:
        key = FEEDBACK_SOURCE.rstrip(":") if name.startswith(FEEDBACK_SOURCE) else name
        named[key] = named.get(key, 0.0) + share
    return sorted(named.items(), key=lambda item: (-item[1], item[0]))


FreshQuery = Annotated[
    bool,
    Query(
        description="fit first when evidence awaits the fit (or wait for the fit running):"
        " admin only, 401 or 403 otherwise"
    ),
]


async def fitted_first(services: Services, caller: Caller, fresh: bool) -> None:
    """With ``fresh``, the admin's fit of what awaits it (``SkillService.fit_now``: shared
    with a fit running and with other callers); a reader is refused (a fit costs CPU)."""
    if fresh:
        caller.require("admin", what="fresh=true (a fit first)")
        await services.skill.fit_now()


@router.get("/skills", response_model=SkillBoardOut)
async def skills(
    services: ServicesDep,
    caller: CallerDep,
    task_type: Annotated[str | None, Query(pattern=TASK_TYPE_PATTERN)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    fresh: FreshQuery = False,
) -> SkillBoardOut:
    """Settled agents by skill, best first, in tiers (the order the evidence supports);
    then the provisional ones, with no tier."""
    await fitted_first(services, caller, fresh)
    fleet = await services.store.get_fleet_skill()
    board = await services.skill.board(task_type, limit)
    scales = [
        ScaleOut(task_type=t, sources=[ScaleSource(source=n, share=s) for n, s in _named(shares)])
        for t, shares in sorted(fleet.scales.items())
        if task_type is None or t == task_type
    ]
    return SkillBoardOut(
        task_type=task_type, entries=[skill_out(e) for e in board], scale=scales,
        **freshness_out(await services.skill.freshness(fleet)),
    )  # fmt: skip


@router.get("/agents/{agent_id}/skills", response_model=AgentSkillsOut)
async def agent_skills(
    services: ServicesDep, caller: CallerDep, agent_id: str, fresh: FreshQuery = False
) -> AgentSkillsOut:
    """One agent's skill overall and per task type; 404 for an agent without evidence
    (offering the closest known ids when nobody knows it)."""
    await fitted_first(services, caller, fresh)
    fleet = await services.store.get_fleet_skill()
    try:
        found = await services.skill.of_agent(agent_id)
    except NotFound:
        raise await not_found("skill", agent_id, services.oracle.known) from None
    return AgentSkillsOut(
        agent_id=agent_id,
        overall=skill_out(found.overall),
        task_types=[skill_out(e) for e in found.task_types],
        predicted=[skill_out(e) for e in found.predicted],
        **freshness_out(await services.skill.freshness(fleet)),
    )  # fmt: skip
