"""``/healthz`` (the process answers) and ``/readyz`` (the store answers too)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from agentladder.api.deps import ServicesDep
from agentladder.api.errors import error_response
from agentladder.errors import StoreError

__all__ = ["router"]

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """Alive."""
    return {"status": "ok"}


@router.get("/readyz", response_model=None)
async def readyz(services: ServicesDep) -> dict[str, str] | JSONResponse:
    """Ready when the store answers; 503 otherwise."""
    try:
        await services.store.ping()
    except StoreError as error:
        return error_response(503, "store_unavailable", str(error))
    return {"status": "ready", "store": services.store.url}
