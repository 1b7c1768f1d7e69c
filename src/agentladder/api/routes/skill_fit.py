"""``POST /skills/fit``: fit the skill log now (admin only), for a caller who wants the
estimates exact after a burst of evidence instead of waiting for the periodic fit."""

from __future__ import annotations

import time

from fastapi import APIRouter, Depends, Request
from pydantic import Field

from agentladder.api.deps import Role, ServicesDep
from agentladder.api.routes.skills import FreshnessOut, freshness_out
from agentladder.errors import InvalidInput

__all__ = ["SkillFitOut", "router"]

router = APIRouter(tags=["skills"])


class SkillFitOut(FreshnessOut):
    """What the fit did, and how fresh the estimates are after it: ``pending`` is 0 unless
    evidence arrived while it ran (that evidence took its filter step on the fit's
    states and awaits the next fit)."""

    ran: bool = Field(
        description="whether a fit ran for this call; false when the log had nothing new"
        " since the last fit (with the same rules)"
    )
    seq: int = Field(description="the last skill event the fit read (the log's end then)")
    events: int = Field(description="the skill events it fitted")
    seconds: float = Field(description="how long the fit took (0 when none ran)")
    waited_s: float = Field(
        description="how long this call took, a fit already running waited for included"
    )


async def _no_body(request: Request) -> None:
    """This call takes no body: none, or ``{}``; anything else is 422 naming ``body``
    (its role is checked first, its JSON by the request guard)."""
    sent = (await request.body()).strip()
    if sent and sent.replace(b" ", b"") != b"{}":
        raise InvalidInput("body", sent[:64].decode(errors="replace"), "must be empty or {}")


@router.post(
    "/skills/fit",
    response_model=SkillFitOut,
    dependencies=[Depends(Role("admin")), Depends(_no_body)],
)
async def fit(services: ServicesDep) -> SkillFitOut:
    """Fit the skill log now when evidence awaits the fit. A fit already running is
    waited for, not doubled; when evidence came after it read the log, one more follows,
    shared by every caller who asked meanwhile (the periodic fitter included)."""
    started = time.perf_counter()
    report = await services.skill.fit_now()
    freshness = await services.skill.freshness()
    return SkillFitOut(
        ran=report.ran, seq=report.seq, events=report.events, seconds=round(report.seconds, 3),
        waited_s=round(time.perf_counter() - started, 3), **freshness_out(freshness),
    )  # fmt: skip
