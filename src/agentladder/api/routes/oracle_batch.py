"""``POST /oracle/judgments/batch``: up to ``BATCH_MAX`` judgments in one request, one
result per item in order (docs/import.md).

The body is checked whole, as every write's is: an item that is not a judgment makes the
request 422 naming it (``judgments.3.score``) and nothing is applied. A valid batch is
applied item by item: each is imported, a duplicate (its first award's XP), a conflict, or
refused (a task type past a bound, an agent nobody registered). Each result is the item's
outcome and the XP it earned, never the agent's profile: the answer is bounded by what
was sent (issue 23: 1,000 items, each carrying the whole profile, were answered with up
to 359 MB)."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from agentladder.api.deps import ServicesDep
from agentladder.api.routes.oracle import ORCHESTRATOR_WRITE
from agentladder.services.oracle.batch import ItemStatus, submit_many
from agentladder.services.oracle.models import JudgmentRequest

__all__ = ["BATCH_MAX", "router"]

BATCH_MAX = 1000
"""The most judgments one batch request carries."""

router = APIRouter(prefix="/oracle", tags=["oracle"])


class BatchIn(BaseModel):
    """Judgments, each with the fields of ``POST /oracle/judgments``."""

    model_config = ConfigDict(extra="forbid")

    judgments: list[JudgmentRequest] = Field(min_length=1, max_length=BATCH_MAX)


class BatchItemOut(BaseModel):
    """One item's outcome: imported or duplicate with the XP its award earned (a
    duplicate's: the first award's), conflict or refused with the reason."""

    status: ItemStatus
    agent_id: str
    contract_id: str
    xp_awarded: int | None = Field(
        default=None, description="task XP; null when nothing was applied"
    )
    total_xp: int | None = Field(
        default=None, description="task XP plus the XP of the achievements it unlocked"
    )
    error: str | None = None


class BatchOut(BaseModel):
    """``{"results": [...]}``, one per item, in the order given."""

    results: list[BatchItemOut]


@router.post("/judgments/batch", response_model=BatchOut, dependencies=ORCHESTRATOR_WRITE)
async def judge_batch(services: ServicesDep, batch: BatchIn) -> BatchOut:
    """Each judgment exactly as ``POST /oracle/judgments`` takes it, in order; per item its
    outcome and XP (the profile: ``GET /oracle/profiles/{agent_id}``)."""
    applied = await submit_many(services.oracle, batch.judgments)
    return BatchOut(
        results=[
            BatchItemOut(
                status=r.status,
                agent_id=j.agent_id,
                contract_id=j.contract_id,
                xp_awarded=r.xp_awarded,
                total_xp=r.total_xp,
                error=r.error,
            )
            for j, r in zip(batch.judgments, applied, strict=True)
        ]
    )
