"""The API's own models, as the client takes and returns them (import them from here or
from ``agentladder.client``), and ``Validation``, what ``validate`` did."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from agentladder.api.records import DeliberationOut
from agentladder.api.routes.agent_outcomes import CallOutcome, CallOutcomeIn, CallRecordedOut
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
from agentladder.domain.levels import Level
from agentladder.domain.privileges import SamplingDecision
from agentladder.domain.profile import AgentProfile
from agentladder.domain.routing import Strategy
from agentladder.domain.rules import Complexity
from agentladder.domain.scales import Scale
from agentladder.services.oracle.models import JudgmentRequest, JudgmentResult, ValidationResult
from agentladder.services.routing.savings import SavingsReport

__all__ = [
    "BATCH_MAX",
    "Accepted",
    "AgentConfig",
    "AgentFields",
    "AgentOut",
    "AgentProfile",
    "AgentSkillsOut",
    "BatchIn",
    "BatchItemOut",
    "BatchOut",
    "CallFields",
    "CallOutcome",
    "CallOutcomeIn",
    "CallRecordedOut",
    "DeliberationOut",
    "ExternalDeliberation",
    "ExternalFields",
    "FreshnessOut",
    "JudgeOut",
    "JudgeTypeOut",
    "JudgesOut",
    "JudgmentFields",
    "JudgmentRequest",
    "JudgmentResult",
    "ReportedAgent",
    "ReportedRound",
    "RouteFields",
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


# The keyword arguments of the methods that take a request model (``judge(agent_id=...)``):
# each model's fields, so that an editor offers them and mypy checks their types. The
# values are validated by the model itself (a string where it takes an enum, a dict where
# it takes a nested model); tests/client/test_client_keywords.py checks that each names
# exactly its model's fields.


class JudgmentFields(TypedDict, total=False):
    """The fields of ``JudgmentRequest`` (docs/client.md): ``agent_id``, ``contract_id``
    and ``score`` (or ``success``) at least."""

    agent_id: str
    contract_id: str
    task_type: str
    score: float | None
    success: bool
    retries: int
    duration_ms: float | None
    cost: float
    budget: float | None
    time_limit_ms: float | None
    complexity: Complexity | str | None
    provider: str
    model: str
    history: bool
    judge: str | None
    observed_at: datetime | str | None
    output: str | None
    new_agent: bool
    scale: Scale | None


class CallFields(TypedDict, total=False):
    """The fields of ``CallOutcomeIn``: ``latency_ms`` and ``outcome`` at least."""

    latency_ms: float
    outcome: CallOutcome
    cost_usd: float | None
    input_tokens: int
    output_tokens: int
    error: str | None
    retry_after_s: float | None


class RouteFields(TypedDict, total=False):
    """The fields of ``RouteRequest``: ``count`` (1 by default in ``route``), the task
    type, the constraints and the strategy."""

    count: int
    task_type: str | None
    tags: Sequence[str]
    max_cost_per_round: float | None
    min_level: Level | str | None
    strategy: Strategy | str
    quality_floor: float | None
    quality_floor_share: float | None
    confidence: float | None
    explore_share: float | None
    seed: int | None
    complexity: Complexity | str | None
    min_agent_rank: int
    online_only: bool


class ExternalFields(TypedDict, total=False):
    """The fields of ``ExternalDeliberation``: its id and rounds at least (a round: a
    ``ReportedRound`` or a dict ``{"agents": {name: {"aggregated_score": ...}}}``)."""

    deliberation_id: str
    rounds: Sequence[ReportedRound | Mapping[str, Any]]
    task_type: str | None
    complexity: Complexity | str | None
    observed_at: datetime | str | None


class AgentFields(TypedDict, total=False):
    """The fields of ``AgentConfig``, a heartbeat's declaration: ``name`` at least."""

    name: str
    provider_id: str
    model_name: str
    description: str
    capability_tags: Sequence[str]
    signing_schemes: Sequence[str]
    input_price_per_mtok: float
    output_price_per_mtok: float
