"""The routing section of the configuration: exploration and agent health.

Every value has the default documented in docs/routing.md and docs/config.md.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["RoutingRules"]


class RoutingRules(BaseModel):
    """``routing:`` in the YAML configuration."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_explore_share: float = Field(
        default=0.2, ge=0.0, le=1.0,
        description="explore: the expected share of picks outside best's choice",
    )  # fmt: skip
    confidence: float = Field(
        default=0.65, ge=0.5, lt=1.0,
        description="cheapest_above: the least posterior probability of clearing the floor"
        " for an agent to count as proven, when a request names none",
    )  # fmt: skip
    explore_tail_sd: float = Field(
        default=4.0, gt=0.0, le=10.0,
        description="explore: Thompson draws are cut at this many sd from the mean",
    )  # fmt: skip
    explore_min_sd: float = Field(
        default=0.3, ge=0.0, le=10.0,
        description="cheapest_above: an unproven agent as sure as this is not explored",
    )  # fmt: skip
    explore_horizon: int = Field(
        default=10, ge=1, le=10_000,
        description="cheapest_above explores where this many more judged answers would most"
        " likely prove a cheaper agent",
    )  # fmt: skip
    max_listed_excluded: int = Field(
        default=100, ge=0, le=10_000,
        description="agents not chosen that a routing lists with their reason",
    )  # fmt: skip
    cooldown_after_failures: int = Field(
        default=3, ge=1, le=1000, description="failed provider calls in a row that make it down"
    )
    cooldown_error_share: float = Field(
        default=0.5, gt=0.0, le=1.0,
        description="a share of failed calls in the window that makes it down",
    )  # fmt: skip
    cooldown_window: int = Field(
        default=20, ge=1, le=10_000, description="the last calls the error share is taken over"
    )
    cooldown_min_calls: int = Field(
        default=10, ge=1, le=10_000, description="calls in the window before the share counts"
    )
    cooldown_s: float = Field(
        default=60.0, gt=0.0, le=86_400.0, allow_inf_nan=False,
        description="how long an agent is down the first time (doubled at each opening in"
        " a row)",
    )  # fmt: skip
    max_cooldown_s: float = Field(
        default=900.0, gt=0.0, le=86_400.0, allow_inf_nan=False,
        description="the longest an agent is down, whatever a provider's Retry-After asks",
    )  # fmt: skip
    degraded_error_share: float = Field(
        default=0.2, ge=0.0, lt=1.0,
        description="an agent is degraded when more than this share of its window's calls"
        " failed",
    )  # fmt: skip
    degraded_min_calls: int = Field(
        default=5, ge=1, le=10_000, description="calls in the window before it can be degraded"
    )
    projection_refresh_s: float = Field(
        default=60.0, ge=0.0, le=86_400.0, allow_inf_nan=False,
        description="how often the routing projection loads the whole fleet again in the"
        " background (estimates widen with time; other instances' writes); 0: no"
        " projection, every routing reads the whole fleet",
    )  # fmt: skip
