"""``/healthz`` (the process answers) and ``/readyz`` (the store answers too)."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from agentladder.api.deps import ServicesDep
from agentladder.api.errors import error_response
from agentladder.errors import StoreError

__all__ = ["AliveOut", "ReadyOut", "router"]

router = APIRouter(tags=["health"])


class AliveOut(BaseModel):
    """``GET /healthz``: the process answers."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["ok"]


class ReadyOut(BaseModel):
    """``GET /readyz``: the process and its store answer."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["ready"]
    store: str = Field(description="the store's URL (sqlite:///..., nats://..., memory://)")


@router.get("/healthz", response_model=AliveOut)
async def healthz() -> AliveOut:
    """Alive."""
    return AliveOut(status="ok")


@router.get("/readyz", response_model=ReadyOut)
async def readyz(services: ServicesDep) -> ReadyOut | JSONResponse:
    """Ready when the store answers; 503 otherwise."""
    try:
        await services.store.ping()
    except StoreError as error:
        return error_response(503, "store_unavailable", str(error))
    return ReadyOut(status="ready", store=services.store.url)
