"""What the gateway keeps of each request it answered: which agent answered the contract,
for whom, at which task type and when (``ServedRequest``), so a caller's feedback on the
contract finds its agent after a restart and on another instance (docs/gateway.md,
"Feedback"). Kept ``gateway.feedback_days``; then dropped, and the contract is unknown.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agentladder.domain.agents import AgentName

__all__ = ["ServedRequest"]


class ServedRequest(BaseModel):
    """One answered gateway request."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    contract_id: str = Field(min_length=1, max_length=256)
    agent_id: AgentName
    caller: str = Field(min_length=1, max_length=128, description="the client token's name")
    task_type: str | None = None
    at: float = Field(description="when it was answered, seconds since the epoch")
