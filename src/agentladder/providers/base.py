"""The provider interface: what the orchestrator asks an agent, and what it gets back.

A provider call either returns a value or raises ``ProviderError`` (timeouts, HTTP
errors, refusals, unparseable or out-of-range answers): the orchestrator records it as a
failed submission and never crashes on it.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from agentladder.errors import ProviderError

__all__ = [
    "EvaluateRequest",
    "Evaluation",
    "PeerProposal",
    "Proposal",
    "ProposeRequest",
    "Provider",
    "ProviderError",
    "Usage",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class Usage(BaseModel):
    """Tokens a call used, as the model reported them."""

    model_config = _FROZEN

    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)


class PeerProposal(BaseModel):
    """A proposal of the previous round, shown so that agents can improve on it."""

    model_config = _FROZEN

    agent_id: str
    content: str
    aggregated_score: float | None = None


class ProposeRequest(BaseModel):
    """Ask an agent for its answer in one round."""

    model_config = _FROZEN

    deliberation_id: str
    round: int = Field(ge=1)
    user_query: str
    task_type: str | None = None
    previous: tuple[PeerProposal, ...] = ()
    examples: tuple[str, ...] = Field(default=(), description="mentors' best outputs")
    feedback: str | None = Field(default=None, description="self-correction: what was wrong")


class Proposal(BaseModel):
    """An agent's answer."""

    model_config = _FROZEN

    content: str
    usage: Usage = Usage()


class EvaluateRequest(BaseModel):
    """Ask an agent to score a peer's proposal from 0 to 10."""

    model_config = _FROZEN

    deliberation_id: str
    round: int = Field(ge=1)
    user_query: str
    task_type: str | None = None
    proposal: str


class Evaluation(BaseModel):
    """A score from 0 to 10 with its rationale."""

    model_config = _FROZEN

    score: float = Field(ge=0.0, le=10.0)
    rationale: str = ""
    usage: Usage = Usage()


class Provider(Protocol):
    """Asks one configured agent; one instance per agent."""

    async def propose(self, request: ProposeRequest) -> Proposal:
        """The agent's answer, or ``ProviderError``."""
        ...

    async def evaluate(self, request: EvaluateRequest) -> Evaluation:
        """The agent's score of a peer's proposal, or ``ProviderError``."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
