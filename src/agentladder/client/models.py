"""The API's own models, as the client takes and returns them (import them from here or
from ``agentladder.client``), and ``Validation``, what ``validate`` did."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agentladder.api.records import DeliberationOut
from agentladder.api.routes.oracle import SentinelCheck, ValidationIn
from agentladder.api.routes.oracle_batch import BATCH_MAX, BatchIn, BatchItemOut, BatchOut
from agentladder.api.routes.routing import RouteOut, RouteRequest
from agentladder.api.routes.skill_fit import SkillFitOut
from agentladder.api.routes.skill_judges import JudgeOut, JudgesOut, JudgeTypeOut
from agentladder.api.routes.skills import (
    AgentSkillsOut,
    FreshnessOut,
    SkillAsOfOut,
    SkillBoardOut,
    SkillOut,
)
from agentladder.api.schemas import Accepted, AgentOut
from agentladder.domain.agents import AgentConfig
from agentladder.domain.external import ExternalDeliberation, ReportedAgent, ReportedRound
from agentladder.domain.privileges import SamplingDecision
from agentladder.domain.profile import AgentProfile
from agentladder.services.oracle.models import JudgmentRequest, JudgmentResult, ValidationResult
from agentladder.services.routing.savings import SavingsReport

__all__ = [
    "BATCH_MAX",
    "Accepted",
    "AgentConfig",
    "AgentOut",
    "AgentProfile",
    "AgentSkillsOut",
    "BatchIn",
    "BatchItemOut",
    "BatchOut",
    "DeliberationOut",
    "ExternalDeliberation",
    "FreshnessOut",
    "JudgeOut",
    "JudgeTypeOut",
    "JudgesOut",
    "JudgmentRequest",
    "JudgmentResult",
    "ReportedAgent",
    "ReportedRound",
    "RouteOut",
    "RouteRequest",
    "SamplingDecision",
    "SavingsReport",
    "SentinelCheck",
    "SkillAsOfOut",
    "SkillBoardOut",
    "SkillFitOut",
    "SkillOut",
    "Validation",
    "ValidationIn",
    "ValidationResult",
]


class Validation(BaseModel):
    """What ``validate`` did: the Sentinel's decision, and the verdict recorded when the
    decision was to check (None when the output was not checked)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    decision: SamplingDecision
    result: ValidationResult | None = Field(
        default=None, description="the recorded verdict; None when not checked"
    )
