"""``POST /oracle/judgments/batch``: up to ``BATCH_MAX`` judgments in one request, one
result per item in order (docs/import.md).

The body is checked whole, as every write's is: an item that is not a judgment makes the
request 422 naming it (``judgments.3.score``) and nothing is applied. A valid batch is
applied item by item: each is imported, a duplicate (its first result) or a conflict."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from agentladder.api.deps import ServicesDep
from agentladder.api.routes.oracle import ORCHESTRATOR_WRITE
from agentladder.services.oracle.batch import ItemStatus, submit_many
from agentladder.services.oracle.models import JudgmentRequest, JudgmentResult

__all__ = ["BATCH_MAX", "router"]

BATCH_MAX = 1000
"""The most judgments one batch request carries."""

router = APIRouter(prefix="/oracle", tags=["oracle"])


class BatchIn(BaseModel):
    """Judgments, each with the fields of ``POST /oracle/judgments``."""

    model_config = ConfigDict(extra="forbid")

    judgments: list[JudgmentRequest] = Field(min_length=1, max_length=BATCH_MAX)


class BatchItemOut(BaseModel):
    """One item's outcome: imported or duplicate with its result (a duplicate's is the
    first one), conflict with the reason; refused when a configured judge could not score
    it."""

    status: ItemStatus
    result: JudgmentResult | None = None
    error: str | None = None


class BatchOut(BaseModel):
    """``{"results": [...]}``, one per item, in the order given."""

    results: list[BatchItemOut]


@router.post("/judgments/batch", response_model=BatchOut, dependencies=ORCHESTRATOR_WRITE)
async def judge_batch(services: ServicesDep, batch: BatchIn) -> BatchOut:
    """Each judgment exactly as ``POST /oracle/judgments`` takes it, in order."""
    applied = await submit_many(services.oracle, batch.judgments)
    return BatchOut(
        results=[BatchItemOut(status=r.status, result=r.result, error=r.error) for r in applied]
    )
