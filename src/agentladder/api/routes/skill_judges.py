"""``GET /skills/judges``: every source of scores the skill fit knows, with its leniency,
noise, honesty, weight and evidence, and a warning where its scores count little or its
leniency cannot be learned (``domain/skill/judges.py``)."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field

from agentladder.api.deps import CallerDep, ServicesDep
from agentladder.api.routes.skills import FreshnessOut, freshness_out
from agentladder.domain.skill.judges import SourceRecord, source_records
from agentladder.services.offload import off_loop

__all__ = ["JudgeOut", "JudgeTypeOut", "JudgesOut", "router"]

router = APIRouter(tags=["skills"])


class JudgeTypeOut(BaseModel):
    """A source at one task type it scored."""

    task_type: str
    share: float | None = Field(
        description="its share of the task type's scale (0-1); null when below the three"
        " largest, which are all the fit records"
    )
    leniency: float = Field(description="what it adds to a score there (score points)")
    noise_sd: float = Field(description="the sd of its scores' noise there (score points)")
    observations: int


class JudgeOut(BaseModel):
    """One source of scores as the last fit left it."""

    source: str = Field(description="judge:<name>, agent:<id>[#<k>] or aggregate")
    observations: int = Field(description="the scores of it the fit used")
    leniency: float = Field(description="the mean of its leniency (score points)")
    leniency_sd: float = Field(description="the sd of its leniency")
    noise_sd: float = Field(description="the sd of its scores' noise (score points)")
    honesty: float = Field(description="the probability that its scores follow the quality")
    share: float = Field(
        description="its weight overall: the mean of its shares of the task types' scales"
    )
    task_types: list[JudgeTypeOut]
    warning: str | None = Field(
        description="why its scores count little (honesty below 0.5), or that nothing"
        " checks them (alone at every task type it scores); null otherwise"
    )


class JudgesOut(FreshnessOut):
    """``GET /skills/judges``: the sources, most evidence first."""

    judges: list[JudgeOut]


def judge_out(record: SourceRecord) -> JudgeOut:
    """The API's view of a source's record."""
    return JudgeOut.model_validate(record.model_dump())


@router.get("/skills/judges", response_model=JudgesOut)
async def judges(services: ServicesDep, caller: CallerDep) -> JudgesOut:
    """Every source of scores, most evidence first; the gateway's clients named to an admin
    only (one ``judge:feedback`` to anyone else, as ``GET /skills``' scale)."""
    fleet = await services.store.get_fleet_skill()
    skills = await services.store.list_skills()
    records = await off_loop(source_records, fleet, skills, clients=caller.may("admin"))
    return JudgesOut(
        judges=[judge_out(r) for r in records],
        **freshness_out(await services.skill.freshness(fleet)),
    )
