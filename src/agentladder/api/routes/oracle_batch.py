"""``POST /oracle/judgments/batch``: up to ``BATCH_MAX`` judgments in one request, one
result per item in order (docs/import.md)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentladder.api.deps import ServicesDep
from agentladder.api.routes.oracle import ORCHESTRATOR_WRITE
from agentladder.importing.items import validation_line
from agentladder.services.oracle.batch import ItemStatus, Submitted, submit_many
from agentladder.services.oracle.models import JudgmentRequest, JudgmentResult

__all__ = ["BATCH_MAX", "router"]

BATCH_MAX = 1000
"""The most judgments one batch request carries."""

router = APIRouter(prefix="/oracle", tags=["oracle"])


class BatchIn(BaseModel):
    """Judgments, each with the fields of ``POST /oracle/judgments``."""

    model_config = ConfigDict(extra="forbid")

    judgments: list[Any] = Field(min_length=1, max_length=BATCH_MAX)


class BatchItemOut(BaseModel):
    """One item's outcome: imported or duplicate with its result (a duplicate's is the
    first one), conflict or refused with the reason (``field: problem (value)``)."""

    status: ItemStatus
    result: JudgmentResult | None = None
    error: str | None = None


class BatchOut(BaseModel):
    """``{"results": [...]}``, one per item, in the order given."""

    results: list[BatchItemOut]


@router.post("/judgments/batch", response_model=BatchOut, dependencies=ORCHESTRATOR_WRITE)
async def judge_batch(services: ServicesDep, batch: BatchIn) -> BatchOut:
    """Each judgment exactly as ``POST /oracle/judgments`` takes it; a refused item is not
    applied and the others are."""
    out: list[Submitted | None] = []
    ready: list[JudgmentRequest] = []
    for item in batch.judgments:
        try:
            ready.append(JudgmentRequest.model_validate(item))
        except ValidationError as error:
            out.append(Submitted(ItemStatus.REFUSED, error=validation_line(error, "item")))
        else:
            out.append(None)
    applied = iter(await submit_many(services.oracle, ready))
    results = [next(applied) if found is None else found for found in out]
    return BatchOut(
        results=[BatchItemOut(status=r.status, result=r.result, error=r.error) for r in results]
    )
