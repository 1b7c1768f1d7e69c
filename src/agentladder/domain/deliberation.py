"""Deliberation requests and who takes part: the minimum-rank filter and its companions.

Before dispatch, an agent named in the request is excluded when it is unknown, offline,
unreachable, down (its health: ``down_detail`` says why and until when), below
``min_agent_rank``, or (when the request names a complexity) not allowed that
complexity by its level's privileges for the task type. Fewer than two qualified agents
and the request is refused, listing each excluded agent with its reason and rank.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from agentladder.domain.agents import AgentName
from agentladder.domain.judgment import TASK_TYPE_PATTERN
from agentladder.domain.routing.spec import RouteSpec
from agentladder.domain.rules import Complexity

__all__ = [
    "MAX_QUERY_BYTES",
    "DeliberationRequest",
    "Excluded",
    "ExclusionReason",
    "Scope",
    "SelectSpec",
    "Selection",
    "down_detail",
    "select_agents",
]

MAX_QUERY_BYTES = 32 * 1024


class Scope(StrEnum):
    """How many rounds: quick 1, standard 2, deep 3 (configurable)."""

    QUICK = "quick"
    STANDARD = "standard"
    DEEP = "deep"


class SelectSpec(RouteSpec):
    """``select`` of a deliberation: a routing of at least two agents."""

    @field_validator("count")
    @classmethod
    def _two_at_least(cls, value: int) -> int:
        if value < 2:
            raise ValueError(
                f"a deliberation needs at least 2 agents, not {value} (POST /route chooses"
                " one agent for a task run elsewhere)"
            )
        return value


class DeliberationRequest(BaseModel):
    """``POST /deliberation``: the question, the agents (named, or chosen by ``select``:
    exactly one of the two), the filter, the scope. A ``select`` naming a task type sets
    the deliberation's (the two may not differ)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    user_query: str = Field(min_length=1)
    select: SelectSpec | None = Field(
        default=None, description="choose the agents by routing instead of naming them"
    )
    agent_names: tuple[AgentName, ...] | None = Field(
        default=None, min_length=2, max_length=64, validate_default=True
    )
    min_agent_rank: int = Field(default=0, ge=0)
    scope: Scope = Scope.STANDARD
    task_type: str | None = Field(default=None, pattern=TASK_TYPE_PATTERN)
    complexity: Complexity | None = None

    @field_validator("user_query")
    @classmethod
    def _at_most_32_kib(cls, value: str) -> str:
        size = len(value.encode("utf-8"))
        if size > MAX_QUERY_BYTES:
            raise ValueError(f"must be at most {MAX_QUERY_BYTES} bytes, not {size}")
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @model_validator(mode="before")
    @classmethod
    def _task_type_of_select(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        select = data.get("select")
        chosen = select.get("task_type") if isinstance(select, Mapping) else None
        if isinstance(select, RouteSpec):
            chosen = select.task_type
        if chosen is None:
            return data
        if data.get("task_type") is None:
            return {**data, "task_type": chosen}
        return data

    @field_validator("task_type")
    @classmethod
    def _same_task_type(cls, value: str | None, info: ValidationInfo) -> str | None:
        select = info.data.get("select")
        if select is not None and select.task_type not in (None, value):
            raise ValueError(f"differs from select.task_type {select.task_type!r}")
        return value

    @field_validator("agent_names")
    @classmethod
    def _distinct(
        cls, value: tuple[str, ...] | None, info: ValidationInfo
    ) -> tuple[str, ...] | None:
        if (value is None) == (info.data.get("select") is None) and "select" in info.data:
            raise ValueError("give exactly one of agent_names and select")
        if value is None:
            return value
        seen: set[str] = set()
        for name in value:
            if name in seen:
                raise ValueError(f"lists {name!r} twice")
            seen.add(name)
        return value


class ExclusionReason(StrEnum):
    """Why an agent does not take part."""

    UNKNOWN = "unknown"
    OFFLINE = "offline"
    UNREACHABLE = "unreachable"
    BELOW_MIN_RANK = "below_min_rank"
    COMPLEXITY_NOT_ALLOWED = "complexity_not_allowed"
    DOWN = "down"


class Excluded(BaseModel):
    """An agent left out, with its rank (0 when it has none) and the reason."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent_id: str
    rank: int
    reason: ExclusionReason
    detail: str | None = Field(default=None, description="down: its health's reason and until when")


class Selection(BaseModel):
    """Who takes part and who does not."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    qualified: tuple[str, ...]
    excluded: tuple[Excluded, ...]

    @property
    def enough(self) -> bool:
        """At least two agents qualify."""
        return len(self.qualified) >= 2


def select_agents(
    request: DeliberationRequest,
    *,
    online: Mapping[str, bool],
    ranks: Mapping[str, int],
    allowed: Mapping[str, bool] | None = None,
    reachable: Mapping[str, bool] | None = None,
    down: Mapping[str, str] | None = None,
) -> Selection:
    """Apply the filters in order: unknown, offline, unreachable, down, below the minimum
    rank, complexity.

    ``online`` maps every registered agent to whether it is online (an agent missing from
    it is unknown); ``reachable`` whether this server can ask it (missing: reachable);
    ``ranks`` holds current ranks (missing: 0); ``allowed`` whether each agent may take
    the request's complexity (missing: allowed); ``down`` the agents whose health is down
    now, each with what it says (missing: not down).
    """
    qualified: list[str] = []
    excluded: list[Excluded] = []
    for agent_id in request.agent_names or ():
        rank = ranks.get(agent_id, 0)
        reason = None
        detail = None
        if agent_id not in online:
            reason = ExclusionReason.UNKNOWN
        elif not online[agent_id]:
            reason = ExclusionReason.OFFLINE
        elif reachable is not None and not reachable.get(agent_id, True):
            reason = ExclusionReason.UNREACHABLE
        elif down is not None and agent_id in down:
            reason, detail = ExclusionReason.DOWN, down[agent_id]
        elif rank < request.min_agent_rank:
            reason = ExclusionReason.BELOW_MIN_RANK
        elif allowed is not None and not allowed.get(agent_id, True):
            reason = ExclusionReason.COMPLEXITY_NOT_ALLOWED
        if reason is None:
            qualified.append(agent_id)
        else:
            excluded.append(Excluded(agent_id=agent_id, rank=rank, reason=reason, detail=detail))
    return Selection(qualified=tuple(qualified), excluded=tuple(excluded))


def down_detail(reason: str, until: float | None, now: float) -> str:
    """What a down agent's health says, for its exclusion: ``down until 14:03:12 UTC (in
    28 s): <reason>``, or ``down until the service restarts: <reason>`` (pinned)."""
    if until is None:
        return f"down until the service restarts: {reason}"
    moment = datetime.fromtimestamp(until, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    left = max(0, math.ceil(until - now))
    return f"down until {moment} (in {left} s): {reason}"
