"""Registration rules: heartbeats carry an agent's declaration, never its standing.

Rank, stats, XP and levels are server-owned: the orchestrator and the Oracle are their
only authority. A heartbeat carrying any of them is refused as an attempt to self-promote;
other unknown fields are ignored, so that older and newer agents keep working. An agent
is online while its last heartbeat is younger than 3 heartbeat intervals.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from enum import StrEnum

from agentladder.errors import InvalidInput, Refused

__all__ = [
    "OFFLINE_AFTER_INTERVALS",
    "SERVER_OWNED_FIELDS",
    "AgentStatus",
    "DeclarationMismatch",
    "SelfPromotion",
    "agent_status",
    "check_heartbeat_fields",
    "contradicted_fields",
    "online_window_s",
    "status_within",
]

OFFLINE_AFTER_INTERVALS = 3

SERVER_OWNED_FIELDS = frozenset(
    {
        # AgentPerformanceStats (the rank store)
        "rank", "rounds_completed", "avg_score", "deliberations_completed", "wins",
        "updated_at", "avg_latency_ms", "tasks_completed", "tasks_failed",
        "recent_latencies_ms", "task_success_ratio", "stats",
        # the Oracle's profile and privileges
        "xp", "level", "specializations", "achievements", "total_xp_earned",
        "validation_rate", "privileges", "profile",
        # registry bookkeeping
        "status", "first_seen", "last_seen", "estimated_cost_per_round",
    }
)  # fmt: skip


class AgentStatus(StrEnum):
    """Whether an agent has been heard from recently."""

    ONLINE = "online"
    OFFLINE = "offline"


class SelfPromotion(Refused):
    """A heartbeat tried to set server-owned fields."""

    def __init__(self, agent_id: object, fields: list[str]) -> None:
        self.agent_id = agent_id
        self.fields = fields
        super().__init__(
            f"agent {agent_id!r} may not report server-owned fields {', '.join(fields)}:"
            " rank, stats, XP and levels are set by the server only"
        )


class DeclarationMismatch(Refused):
    """A heartbeat for an agent defined in the config contradicts the config's declaration."""

    def __init__(self, agent_id: str, fields: list[str]) -> None:
        self.agent_id = agent_id
        self.fields = fields
        super().__init__(
            f"agent {agent_id!r} is defined in the server's configuration, which declares"
            f" it: the heartbeat's {', '.join(fields)} differ from it"
        )


def contradicted_fields(
    declared: Mapping[str, object], heartbeat: Mapping[str, object]
) -> list[str]:
    """The fields ``heartbeat`` carries with a value other than ``declared``'s, by name
    (both as validated declarations: lists and tuples compare alike)."""
    return sorted(name for name, value in heartbeat.items() if declared.get(name) != value)


def check_heartbeat_fields(payload: Mapping[str, object]) -> None:
    """Refuse a heartbeat that carries a server-owned field (``SelfPromotion``)."""
    owned = sorted(SERVER_OWNED_FIELDS.intersection(payload))
    if owned:
        raise SelfPromotion(payload.get("name"), owned)


def online_window_s(interval_s: float) -> float:
    """How long an agent stays online after its last heartbeat: 3 intervals."""
    if not (math.isfinite(interval_s) and interval_s > 0):
        raise InvalidInput("heartbeat_interval_s", interval_s, "must be a number > 0")
    return OFFLINE_AFTER_INTERVALS * interval_s


def status_within(last_seen: float, now: float, window_s: float) -> AgentStatus:
    """Online while ``now - last_seen < window_s`` (``online_window_s``). The SQLite
    store evaluates this same comparison in SQL for the listing."""
    return AgentStatus.ONLINE if now - last_seen < window_s else AgentStatus.OFFLINE


def agent_status(last_seen: float, now: float, interval_s: float) -> AgentStatus:
    """Online while the last heartbeat is younger than 3 intervals."""
    return status_within(last_seen, now, online_window_s(interval_s))
