"""``POST /agents/{agent_id}/calls``: the outcome of a call to an agent made elsewhere (a
LiteLLM router, a team's own client), fed to the same health monitor and stats as the
gateway's own calls (``services/gateway/service.py``): an answer or a failure counts, a
``bad_request`` (the request's fault, not the agent's) counts in neither."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from agentladder.api.deps import CheckedJson, Role, ServicesDep
from agentladder.api.schemas import NO_CALLS
from agentladder.domain.ranking import Submission
from agentladder.domain.routing.health import AgentHealth
from agentladder.domain.text import VisibleStr
from agentladder.services.oracle.known import not_found

__all__ = ["CallOutcome", "CallOutcomeIn", "CallRecordedOut", "router"]

router = APIRouter(tags=["agents"])

CallOutcome = Literal[
    "ok", "rate_limited", "timeout", "bad_request", "auth_error", "server_error",
    "unavailable", "error",
]  # fmt: skip
"""How a call ended: ``ok`` answered; ``bad_request`` the request's fault (counted
nowhere); every other one the agent's (or its provider's) failure."""

EXTERNAL = "external"
"""The ``call`` label of these calls in ``/metrics`` (the gateway's are ``call``)."""


class CallOutcomeIn(BaseModel):
    """One call's outcome: ``{"latency_ms", "outcome", "cost_usd", "error", ...}``."""

    model_config = ConfigDict(extra="forbid")

    latency_ms: float = Field(ge=0, le=86_400_000, description="how long the call took")
    outcome: CallOutcome
    cost_usd: float | None = Field(default=None, ge=0, le=1_000_000)
    input_tokens: int = Field(default=0, ge=0, le=1_000_000_000)
    output_tokens: int = Field(default=0, ge=0, le=1_000_000_000)
    error: Annotated[VisibleStr, Field(max_length=2000)] | None = None
    retry_after_s: float | None = Field(default=None, ge=0, le=86_400)


class CallRecordedOut(BaseModel):
    """What the outcome fed, and the agent's health after it."""

    agent_id: str
    outcome: CallOutcome
    counted: bool = Field(description="fed to health and stats (false for bad_request)")
    health: AgentHealth


@router.post(
    "/agents/{agent_id}/calls", response_model=CallRecordedOut,
    dependencies=[Depends(Role("orchestrator")), CheckedJson],
)  # fmt: skip
async def record_call(services: ServicesDep, agent_id: str, call: CallOutcomeIn) -> CallRecordedOut:
    """Record a call to a known agent made elsewhere: its health (ok, degraded, down) and
    stats (tasks completed or failed, latency) as for the gateway's calls; 404 (with the
    closest known ids) for an agent nobody knows."""
    ids, _ = await services.oracle.known.index()
    if agent_id not in ids:
        raise await not_found("agent", agent_id, services.oracle.known)
    counted = call.outcome != "bad_request"
    if counted:
        ok = call.outcome == "ok"
        error = None if ok else (call.error or call.outcome)
        services.health.record(
            agent_id, ok=ok, error=error, retry_after_s=None if ok else call.retry_after_s
        )
        gateway = services.gateway
        kind = None if ok else call.outcome
        gateway.calls.observe(agent_id, EXTERNAL, call.latency_ms / 1000, kind)
        gateway.stats.add(Submission(agent_id=agent_id, latency_ms=call.latency_ms, ok=ok))
    if call.cost_usd is not None:
        services.gateway.calls.spend(agent_id, call.input_tokens, call.output_tokens, call.cost_usd)
    health = services.health.tracked(agent_id) or NO_CALLS
    return CallRecordedOut(agent_id=agent_id, outcome=call.outcome, counted=counted, health=health)
