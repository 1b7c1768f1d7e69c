"""``/deliberation``: start one, follow it, list them, report one run elsewhere."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, Response
from pydantic import BaseModel

from agentladder.api.deps import MAX_OFFSET, CheckedJson, Role, ServicesDep
from agentladder.api.paging import PageOut, page_of
from agentladder.api.records import LISTED, SHOWN, DeliberationOut, DeliberationSummary
from agentladder.api.schemas import Accepted
from agentladder.domain.deliberation import DeliberationRequest
from agentladder.domain.external import ExternalDeliberation

__all__ = ["router"]

router = APIRouter(tags=["deliberations"])
ORCHESTRATOR_WRITE = [Depends(Role("orchestrator")), CheckedJson]
"""The caller's role first (a refusal whatever the body), then the body's numbers."""


class DeliberationsOut(BaseModel):
    """``{"deliberations": [...], "page": {...}}``, newest first."""

    deliberations: list[DeliberationSummary]
    page: PageOut


@router.post(
    "/deliberation", status_code=202, response_model=Accepted, dependencies=ORCHESTRATOR_WRITE
)
async def start(
    services: ServicesDep, request: DeliberationRequest, response: Response
) -> Accepted:
    """Queue a deliberation: 202 with ``Location``, where to follow it (400 with the
    excluded agents when fewer than 2 qualify; 503 busy, with Retry-After, when this
    instance holds as many as it may)."""
    record = await services.orchestrator.submit(request)
    response.headers["Location"] = f"/deliberation/{record.id}"
    return Accepted(deliberation_id=record.id, status=record.status.value)


@router.get("/deliberation/{deliberation_id}", response_model=DeliberationOut)
async def get(services: ServicesDep, deliberation_id: str) -> Response:
    """Status, agents, excluded, rounds with proposals and scores, result, side effects."""
    record = await services.orchestrator.get(deliberation_id)
    # encoded by pydantic in one pass, not walked again by FastAPI's encoder
    body = record.model_dump_json(exclude=set(SHOWN))
    return Response(body, media_type="application/json")


@router.get("/deliberations", response_model=DeliberationsOut)
async def list_all(
    services: ServicesDep,
    request: Request,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> Response:
    """Deliberations, newest first, a page (``page.next``: the next one)."""
    read = await services.orchestrator.list(limit=limit + 1, offset=offset)
    links = Response()
    records, page = page_of(request, links, read, offset=offset, limit=limit)
    # each record encoded by pydantic in one pass, as GET /deliberation/{id} does
    items = b",".join(r.model_dump_json(exclude=set(LISTED)).encode() for r in records)
    body = b'{"deliberations":[' + items + b'],"page":' + page.model_dump_json().encode() + b"}"
    headers = {"Link": links.headers["Link"]} if "Link" in links.headers else None
    return Response(body, media_type="application/json", headers=headers)


@router.post("/deliberations/results", response_model=Accepted, dependencies=ORCHESTRATOR_WRITE)
async def report(services: ServicesDep, external: ExternalDeliberation) -> Accepted:
    """A deliberation run elsewhere, ranked like one run here, once per id."""
    record, duplicate = await services.orchestrator.report(external)
    return Accepted(deliberation_id=record.id, status=record.status.value, duplicate=duplicate)
