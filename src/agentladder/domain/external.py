"""Bring your own orchestrator: a deliberation run elsewhere, reported for ranking.

Per round, per agent: the aggregated score its proposal got (or null: no scored proposal)
and the latency of its work (one submission). The report goes through the same ranking
path as a deliberation run here, and is applied once per deliberation id.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agentladder.domain.agents import AgentName
from agentladder.domain.judgment import TASK_TYPE_PATTERN
from agentladder.domain.rules import Complexity

__all__ = ["DELIBERATION_ID_PATTERN", "ExternalDeliberation", "ReportedAgent", "ReportedRound"]

DELIBERATION_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
_STRICT = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class ReportedAgent(BaseModel):
    """One agent in one round of a reported deliberation."""

    model_config = _STRICT

    aggregated_score: float | None = Field(ge=0.0, le=10.0)
    latency_ms: float = Field(default=0.0, ge=0.0)


class ReportedRound(BaseModel):
    """One round: the agents that took part and how each did."""

    model_config = _STRICT

    agents: dict[AgentName, ReportedAgent] = Field(min_length=1, max_length=64)


class ExternalDeliberation(BaseModel):
    """``POST /deliberations/results``: a completed deliberation run elsewhere."""

    model_config = _STRICT

    deliberation_id: str = Field(pattern=DELIBERATION_ID_PATTERN)
    rounds: tuple[ReportedRound, ...] = Field(min_length=1, max_length=20)
    task_type: str | None = Field(default=None, pattern=TASK_TYPE_PATTERN)
    complexity: Complexity | None = None

    @property
    def agents(self) -> list[str]:
        """Every agent of any round, in order of first appearance."""
        seen: dict[str, None] = {}
        for reported in self.rounds:
            seen.update(dict.fromkeys(reported.agents))
        return list(seen)
