"""What a caller asks of routing (``select`` in ``POST /deliberation``, ``POST /route``),
and what routing answers: the picks with why each was chosen, the others with why not."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agentladder.domain.judgment import TASK_TYPE_PATTERN
from agentladder.domain.levels import Level
from agentladder.domain.text import VisibleStr

__all__ = [
    "ExclusionCode", "NotChosen", "Pick", "Reference", "RouteSpec", "Routing", "Strategy",
]  # fmt: skip

MAX_SEED = 2**53


class Strategy(StrEnum):
    """How the agents are chosen among those that qualify."""

    BEST = "best"
    EXPLORE = "explore"
    CHEAPEST_ABOVE = "cheapest_above"


class RouteSpec(BaseModel):
    """``select``: how many agents, for what, under which constraints, by which strategy."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    count: int = Field(
        ge=1, le=64,
        description="how many agents: 1 for one task to one agent (a deliberation needs 2)",
    )  # fmt: skip
    task_type: str | None = Field(default=None, pattern=TASK_TYPE_PATTERN)
    tags: tuple[VisibleStr, ...] = Field(
        default=(), max_length=32, description="capability tags every chosen agent declares"
    )
    max_cost_per_round: float | None = Field(
        default=None, ge=0.0, allow_inf_nan=False,
        description="the most one chosen agent may cost per round (estimated_cost_per_round)",
    )  # fmt: skip
    min_level: Level | None = Field(
        default=None, description="the least level (at the task type, when one is named)"
    )
    strategy: Strategy = Strategy.BEST
    quality_floor: float | None = Field(
        default=None, ge=0.0, le=10.0, allow_inf_nan=False,
        description="cheapest_above: the skill (0-10) every chosen agent must clear, with"
        " probability confidence",
    )  # fmt: skip
    quality_floor_share: float | None = Field(
        default=None, gt=0.0, le=1.0, allow_inf_nan=False,
        description="cheapest_above: the floor as a share of the reference agent's skill"
        " (the best available: the highest lower bound among the agents that qualify but"
        " for the floor); instead of quality_floor",
    )  # fmt: skip
    confidence: float | None = Field(
        default=None, ge=0.5, lt=1.0, allow_inf_nan=False,
        description="cheapest_above: the least posterior probability that an agent's skill"
        " clears the floor for it to count as proven; none: routing.confidence",
    )  # fmt: skip
    explore_share: float | None = Field(
        default=None, ge=0.0, le=1.0, allow_inf_nan=False,
        description="explore, cheapest_above: the expected share of picks spent exploring;"
        " none: routing.max_explore_share",
    )  # fmt: skip
    seed: int | None = Field(
        default=None, ge=0, le=MAX_SEED,
        description="the seed of the draws (explore) and of tie-breaks; none: a fresh one",
    )  # fmt: skip

    @field_validator("tags")
    @classmethod
    def _tags(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for tag in value:
            if not tag.strip():
                raise ValueError("a tag must not be blank")
        return value

    @model_validator(mode="after")
    def _floor_with_its_strategy(self) -> RouteSpec:
        if self.quality_floor is not None and self.quality_floor_share is not None:
            raise ValueError(
                "quality_floor: give one of quality_floor and quality_floor_share, not both"
            )
        if self.strategy is Strategy.CHEAPEST_ABOVE and self.floor_given is None:
            raise ValueError(
                "quality_floor: strategy cheapest_above needs a quality_floor or a"
                " quality_floor_share"
            )
        return self

    @property
    def floor_given(self) -> float | None:
        """The floor as asked (absolute or a share), None when neither is."""
        return self.quality_floor if self.quality_floor is not None else self.quality_floor_share


class ExclusionCode(StrEnum):
    """Why an agent was not chosen (the first reason that applies, in this order)."""

    OFFLINE = "offline"
    UNREACHABLE = "unreachable"
    DOWN = "down"
    COOLDOWN = "cooldown"  # records stored before health replaced cooldowns (now: down)
    COMPLEXITY = "complexity"
    BELOW_MIN_RANK = "below_min_rank"
    LEVEL = "level"
    TAGS = "tags"
    COST = "cost"
    BELOW_QUALITY_FLOOR = "below_quality_floor"
    NOT_CHOSEN = "not_chosen"


class Pick(BaseModel):
    """A chosen agent: its skill at the task type, cost, latency, and why it was chosen."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent_id: str
    skill: float
    sd: float
    low: float = Field(description="the skill's 95% lower bound")
    observations: int
    estimated_cost_per_round: float | None = Field(
        description="none: it declared no prices (an agent known by its evidence only)"
    )
    latency_p90_ms: float | None
    reason: Strategy = Field(description="best, explore or cheapest_above: how it was chosen")
    detail: str
    sample: float | None = Field(default=None, description="explore: the skill it drew")
    success_share: float | None = Field(
        default=None,
        description="degraded: the share of calls it answers; skill, sd and low are then"
        " its skill's times it (the quality it is expected to deliver)",
    )
    p_floor: float | None = Field(
        default=None,
        description="cheapest_above: the posterior probability that its skill clears the floor",
    )


class NotChosen(BaseModel):
    """An agent left out and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent_id: str
    reason: ExclusionCode
    detail: str
    p_floor: float | None = Field(
        default=None,
        description="cheapest_above: the posterior probability that its skill clears the floor",
    )


class Reference(BaseModel):
    """The best available agent: the highest lower bound among the agents that pass
    every rule but the quality floor. A relative floor is a share of its skill; savings
    are counted against always using it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent_id: str
    skill: float
    sd: float
    low: float
    estimated_cost_per_round: float | None


class Routing(BaseModel):
    """The answer: the picks, best first, and the agents left out (up to
    ``routing.max_listed_excluded`` of them, in the strategy's order; ``unlisted`` more)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    strategy: Strategy
    task_type: str | None
    count: int
    seed: int
    explore_slots: int = Field(default=0, description="explore: picks it could spend exploring")
    quality_floor: float | None = Field(
        default=None,
        description="cheapest_above: the floor applied (from quality_floor_share: that share"
        " of the reference's skill)",
    )
    quality_floor_share: float | None = None
    confidence: float | None = Field(
        default=None, description="cheapest_above: the probability an agent was asked to clear"
    )
    reference: Reference | None = Field(
        default=None, description="the best available agent (none: no agent qualifies)"
    )
    agents: list[Pick]
    excluded: list[NotChosen]
    unlisted: int = Field(default=0, description="agents left out and not listed")
    warnings: list[str] = Field(
        default_factory=list,
        description="what the caller should know, one line each: no agent has evidence at"
        " the task type (routed on predicted skill), with the closest known task types",
    )

    @property
    def enough(self) -> bool:
        """As many agents qualify as were asked for."""
        return len(self.agents) >= self.count

    @property
    def estimated_cost_per_round(self) -> float:
        """What the picks together cost per round (a pick with no declared prices: 0)."""
        return sum(p.estimated_cost_per_round or 0.0 for p in self.agents)
