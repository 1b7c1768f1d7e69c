"""``/oracle``: judgments, profiles, the ledger, leaderboards, privileges, the Sentinels."""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import ClientDisconnect

from agentladder.api.deps import (
    MAX_OFFSET,
    CheckedJson,
    Role,
    ServicesDep,
    caller_of_request,
    check_json,
    is_json,
)
from agentladder.api.direct import DirectRoute
from agentladder.api.errors import ApiError
from agentladder.api.paging import PageOut, page_of
from agentladder.api.schemas import ValidationRateOut
from agentladder.domain.agents import AgentName
from agentladder.domain.judgment import TASK_TYPE_PATTERN
from agentladder.domain.privileges import Privileges, SamplingDecision
from agentladder.domain.profile import AgentProfile
from agentladder.domain.text import Visible
from agentladder.services.container import Services
from agentladder.services.oracle.models import JudgmentRequest, JudgmentResult, ValidationResult
from agentladder.store.base import LedgerEntry
from agentladder.store.records import LeaderboardRow

__all__ = ["router"]

router = APIRouter(prefix="/oracle", tags=["oracle"])
TaskType = Annotated[str | None, Query(pattern=TASK_TYPE_PATTERN)]
ORCHESTRATOR_WRITE = [Depends(Role("orchestrator")), CheckedJson]
"""The caller's role first (a refusal whatever the body), then the body's numbers."""


class HistoryOut(BaseModel):
    """A page of the xp_history ledger."""

    entries: list[LedgerEntry]
    offset: int
    limit: int
    page: PageOut


class LeaderboardOut(BaseModel):
    """``{"entries": [...], "page": {...}}``."""

    entries: list[LeaderboardRow]
    page: PageOut


LEADERBOARD_DEPTH = 1000
"""How far down a leaderboard reaches: ``offset + limit`` at most this."""


class SentinelCheck(BaseModel):
    """Should this output be validated?"""

    model_config = ConfigDict(extra="forbid")

    agent_id: AgentName
    task_type: str | None = Field(default=None, pattern=TASK_TYPE_PATTERN)
    force: bool = False


class ValidationIn(BaseModel):
    """A Sentinel's verdict on a judged task."""

    model_config = ConfigDict(extra="forbid")

    agent_id: AgentName
    contract_id: Annotated[str, Field(min_length=1, max_length=256), Visible]
    passed: bool
    notes: str = Field(default="", max_length=10_000)


async def _judge_directly(request: Request) -> Response | None:
    """``POST /oracle/judgments`` answered without FastAPI's per-request work
    (``api/direct.py``): for an orchestrator (or admin) whose JSON body passes the body's
    checks and validates, the award, encoded once; None for any other request, which
    ``judge`` then answers (its refusal or its error, as declared)."""
    caller = caller_of_request(request)
    if not caller.may("orchestrator") or not is_json(request.headers.get("content-type")):
        return None
    try:
        raw = await request.body()
    except ClientDisconnect:  # the body cut short: the declared route's 400, as before
        return None
    try:
        body = json.loads(raw)
        check_json(body)
        judgment = JudgmentRequest.model_validate(body)
    except (ValueError, RecursionError, ApiError):  # ValidationError is a ValueError
        return None
    services: Services = request.app.state.services
    result = await services.oracle.submit_for_judgment(judgment)
    return Response(result.model_dump_json(by_alias=True), media_type="application/json")


class JudgmentRoute(DirectRoute):
    """``POST /oracle/judgments``: ``judge`` declared, ``_judge_directly`` first."""

    direct = staticmethod(_judge_directly)


async def judge(services: ServicesDep, request: JudgmentRequest) -> JudgmentResult:
    """The award process for one judged task; the same contract again returns the first.
    Its valid requests are answered by ``_judge_directly``, the same award."""
    return await services.oracle.submit_for_judgment(request)


router.add_api_route(
    "/judgments", judge, methods=["POST"], response_model=JudgmentResult,
    dependencies=ORCHESTRATOR_WRITE, route_class_override=JudgmentRoute,
)  # fmt: skip


@router.get("/profiles/{agent_id}", response_model=AgentProfile)
async def profile(services: ServicesDep, agent_id: str) -> AgentProfile:
    """The specification's AgentProfile in snake_case (a configured or registered agent
    never judged: rookie, 0 XP); 404 for an agent nobody registered and never judged."""
    return await services.oracle.get_profile(agent_id)


@router.get("/profiles/{agent_id}/history", response_model=HistoryOut)
async def history(
    services: ServicesDep,
    agent_id: str,
    request: Request,
    response: Response,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> HistoryOut:
    """The agent's xp_history, oldest first, one page (``page.next``: the next one)."""
    await services.oracle.get_profile(agent_id)  # 404 for an agent nobody registered
    read = await services.store.ledger(agent_id, offset=offset, limit=limit + 1)
    entries, page = page_of(request, response, read, offset=offset, limit=limit)
    return HistoryOut(entries=entries, offset=offset, limit=limit, page=page)


@router.get("/leaderboard", response_model=LeaderboardOut)
async def leaderboard(
    services: ServicesDep,
    request: Request,
    response: Response,
    task_type: TaskType = None,
    limit: Annotated[int, Query(ge=1, le=LEADERBOARD_DEPTH)] = 10,
    offset: Annotated[int, Query(ge=0, lt=LEADERBOARD_DEPTH)] = 0,
) -> LeaderboardOut:
    """Top agents by XP, overall or in one task type, a page; positions 1 to 1000 (a
    page is cut there, and has no next page past it)."""
    end = min(offset + limit, LEADERBOARD_DEPTH)
    rows = await services.oracle.get_leaderboard(task_type, min(end + 1, LEADERBOARD_DEPTH))
    read = rows[offset : end + 1] if end < LEADERBOARD_DEPTH else rows[offset:end]
    entries, page = page_of(request, response, read, offset=offset, limit=end - offset)
    return LeaderboardOut(entries=entries, page=page)


@router.get("/agents/{agent_id}/validation-rate", response_model=ValidationRateOut)
async def validation_rate(
    services: ServicesDep, agent_id: str, task_type: TaskType = None
) -> ValidationRateOut:
    """How often the Sentinels check this agent's work (for a task type: at its level there):
    the level's rate, and the effective rate (1.0 on probation; at least what its failure
    share needs) with its reason, and the share and its basis."""
    privileges = await services.oracle.get_privileges(agent_id, task_type)
    rate = await services.oracle.get_effective_rate(agent_id, task_type)
    return ValidationRateOut(
        agent_id=agent_id, task_type=task_type, level=privileges.level,
        validation_rate=privileges.validation_rate,
        effective_rate=privileges.effective_rate or 0.0, reason=privileges.rate_reason or "level",
        clearance_left=privileges.clearance_left, judged=rate.judged,
        failure_share=rate.failure_share,
    )  # fmt: skip


@router.get("/agents/{agent_id}/privileges", response_model=Privileges)
async def privileges(
    services: ServicesDep, agent_id: str, task_type: TaskType = None
) -> Privileges:
    """Level, validation rate, max complexity, max retries, self-correct, mentor."""
    return await services.oracle.get_privileges(agent_id, task_type)


@router.post("/sentinel/check", response_model=SamplingDecision, dependencies=ORCHESTRATOR_WRITE)
async def sentinel_check(services: ServicesDep, check: SentinelCheck) -> Response:
    """Validate this output, at the effective rate? (reason: requested, probation,
    model_change, sampled or skipped_by_level)."""
    decision: SamplingDecision = await services.sentinel.should_validate(
        check.agent_id, check.task_type, check.force
    )
    # ``validate`` by its alias, as before; encoded here, not checked again by FastAPI
    return Response(decision.model_dump_json(by_alias=True), media_type="application/json")


@router.post("/validations", response_model=ValidationResult, dependencies=ORCHESTRATOR_WRITE)
async def validations(services: ServicesDep, verdict: ValidationIn) -> ValidationResult:
    """Record a verdict; a failed one counts the task failed, takes back no XP."""
    return await services.sentinel.record_validation(
        verdict.agent_id, verdict.contract_id, verdict.passed, verdict.notes
    )
