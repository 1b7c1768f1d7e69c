"""What the gateway keeps of each request it answered: which agent answered the contract,
for whom, at which task type and when (``ServedRequest``), so a caller's feedback on the
contract finds its agent after a restart and on another instance (docs/gateway.md,
"Feedback"). Kept ``gateway.feedback_days``; then dropped, and the contract is unknown.

A routed answer also keeps what ``GET /routing/savings`` weighs it by (docs/routing.md,
"Does routing pay?"): the strategy, what the answer cost and its tokens, and the
reference of its routing (the best available agent) with the cost of those tokens at the
reference's declared prices and its skill when routed, and what classifying it cost
(``gateway.classify``'s agent, when it was asked). These fields are optional: a
record stored before them reads with them null (and counts as not routed).

``request_id`` is the id the caller gave its request (``x-irid``, Inspect AI's, else
``x-client-request-id``, else ``x-request-id``: ``services/gateway/request_ids.py``), so a
log that kept it finds the answer (``Store.find_served``; docs/integrations.md, "Inspect
AI").
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agentladder.domain.agents import AgentName
from agentladder.domain.routing.spec import Strategy

__all__ = ["REQUEST_ID_MAX", "ServedRequest"]

REQUEST_ID_MAX = 128
"""The longest client request id kept (a longer one is not kept)."""


class ServedRequest(BaseModel):
    """One answered gateway request."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    contract_id: str = Field(min_length=1, max_length=256)
    agent_id: AgentName
    caller: str = Field(min_length=1, max_length=128, description="the client token's name")
    task_type: str | None = None
    at: float = Field(description="when it was answered, seconds since the epoch")
    routed: Strategy | None = Field(
        default=None,
        description="the routing's strategy; none: the caller named the agent (or the record"
        " is older than the field)",
    )
    cost_usd: float | None = Field(
        default=None, ge=0.0, description="the answer's tokens at its agent's declared prices"
    )
    input_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)
    reference_agent: AgentName | None = Field(
        default=None, description="routed: the best available agent (Routing.reference)"
    )
    reference_cost_usd: float | None = Field(
        default=None, ge=0.0,
        description="routed: the same tokens at the reference's declared prices",
    )  # fmt: skip
    reference_skill: float | None = Field(
        default=None, description="routed: the reference's skill at the task type when routed"
    )
    reference_sd: float | None = Field(default=None, ge=0.0)
    quality_floor: float | None = Field(
        default=None, description="cheapest_above: the floor the routing applied"
    )
    request_id: str | None = Field(
        default=None, min_length=1, max_length=REQUEST_ID_MAX,
        description="the caller's id of its request (x-irid, x-client-request-id or"
        " x-request-id), when it sent one",
    )  # fmt: skip
    classifier_cost_usd: float | None = Field(
        default=None, ge=0.0,
        description="routed without a task type: what the classifier agent's call cost"
        " (gateway.classify), routing's own cost",
    )  # fmt: skip
