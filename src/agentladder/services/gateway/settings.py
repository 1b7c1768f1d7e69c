"""The ``gateway:`` section of the configuration, and a client token's ``budget``.

gateway:
  max_attempts: 3           # agents tried for one request (the first and its fallbacks)
  max_body_bytes: 16777216  # a /v1/ request's body (a chat's whole context)
  models:                   # aliases a caller may name as its ``model``
    smart: {task_type: audit, strategy: best}
    cheap: {task_type: audit, strategy: cheapest_above, quality_floor: 7.0}
    near-best: {task_type: audit, strategy: cheapest_above, quality_floor_share: 0.95,
                confidence: 0.9}
  classify:                 # a task type for routed requests that name none (classify.py)
    rules: [{task_type: code, keywords: [traceback]}]
    default: general
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agentladder.domain.judgment import TASK_TYPE_PATTERN
from agentladder.domain.routing.spec import Strategy
from agentladder.services.gateway.classify import ClassifySettings
from agentladder.services.gateway.judge import JudgeSettings

__all__ = ["ALIAS_PATTERN", "Budget", "GatewayModel", "GatewaySettings"]

ALIAS_PATTERN = r"^[A-Za-z0-9_.-]{1,64}$"
"""An alias's name: the characters of an agent id (it must not begin with ``route:``)."""

_FROZEN = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class GatewayModel(BaseModel):
    """An alias: the routing a ``model`` name stands for."""

    model_config = _FROZEN

    task_type: str | None = Field(default=None, pattern=TASK_TYPE_PATTERN)
    strategy: Strategy = Strategy.BEST
    quality_floor: float | None = Field(default=None, ge=0.0, le=10.0)
    quality_floor_share: float | None = Field(
        default=None, gt=0.0, le=1.0,
        description="cheapest_above: the floor as a share of the reference agent's skill",
    )  # fmt: skip
    confidence: float | None = Field(
        default=None, ge=0.5, lt=1.0,
        description="cheapest_above: the least probability of clearing the floor",
    )  # fmt: skip
    explore_share: float | None = Field(
        default=None, ge=0.0, le=1.0,
        description="explore, cheapest_above: the expected share of picks spent exploring",
    )  # fmt: skip
    tags: tuple[str, ...] = Field(default=(), max_length=32)
    max_cost_per_round: float | None = Field(default=None, ge=0.0)

    @model_validator(mode="after")
    def _floor_with_its_strategy(self) -> GatewayModel:
        """Checked as routing checks a ``RouteSpec``, and what only cheapest_above (or a
        strategy that explores) reads is refused with another strategy."""
        if self.quality_floor is not None and self.quality_floor_share is not None:
            raise ValueError("give one of quality_floor and quality_floor_share, not both")
        cheapest = self.strategy is Strategy.CHEAPEST_ABOVE
        if cheapest and self.quality_floor is None and self.quality_floor_share is None:
            raise ValueError(
                "strategy cheapest_above needs a quality_floor or a quality_floor_share"
            )
        if not cheapest and (self.quality_floor_share is not None or self.confidence is not None):
            raise ValueError(
                f"quality_floor_share and confidence apply to strategy cheapest_above only,"
                f" not {self.strategy.value}"
            )
        if self.strategy is Strategy.BEST and self.explore_share is not None:
            raise ValueError("explore_share applies to strategies explore and cheapest_above")
        return self


class GatewaySettings(BaseModel):
    """How the gateway chooses and retries (docs/gateway.md)."""

    model_config = _FROZEN

    max_attempts: int = Field(
        default=3, ge=1, le=16,
        description="agents tried for one request: the routed one, then the next ones (1:"
        " no fallback)",
    )  # fmt: skip
    models: dict[str, GatewayModel] = Field(default_factory=dict)
    max_body_bytes: int = Field(
        default=16 * 1024 * 1024, ge=1024, le=1024 * 1024 * 1024,
        description="the size of a request's body under /v1/ (a chat's whole context, its"
        " images inlined: api.max_body_bytes bounds the other routes); at most"
        " api.max_buffered_bytes",
    )  # fmt: skip
    judge: JudgeSettings | None = Field(
        default=None, description="who checks answers by earned trust (none: no checks)"
    )
    classify: ClassifySettings | None = Field(
        default=None,
        description="how a routed request that names no task type gets one (none: it is"
        " routed at the agents' overall skill)",
    )
    feedback_days: int = Field(
        default=30, ge=1, le=3650,
        description="days a request's contract takes feedback (its record is kept as long)",
    )  # fmt: skip
    reserve_output_tokens: int = Field(
        default=1024, ge=1, le=1_000_000,
        description="the output tokens a budgeted client's request without max_tokens"
        " (or max_completion_tokens) holds money for",
    )  # fmt: skip
    reservation_s: float = Field(
        default=900.0, ge=10.0, le=86_400.0,
        description="seconds a request's hold counts when it is never settled (its process"
        " died): past it, the money is free again",
    )  # fmt: skip

    @field_validator("models")
    @classmethod
    def _alias_names(cls, value: dict[str, GatewayModel]) -> dict[str, GatewayModel]:
        for name in value:
            if not re.fullmatch(ALIAS_PATTERN, name):
                raise ValueError(f"alias {name!r} must match {ALIAS_PATTERN}")
        return value


class Budget(BaseModel):
    """What a client token may spend, at the agents' prices, per period."""

    model_config = _FROZEN

    limit_usd: float = Field(gt=0.0, le=1e9)
    period: Literal["day", "month", "total"] = "month"
