"""Leaderboard ordering and rows, shared by the stores that sort in Python."""

from __future__ import annotations

from collections.abc import Iterable

from agentladder.domain.profile import AgentProfile
from agentladder.errors import InvalidInput
from agentladder.store.records import LeaderboardRow

__all__ = ["MAX_LIMIT", "check_limit", "leaderboard_rows", "sort_key"]

MAX_LIMIT = 1000


def check_limit(limit: int) -> int:
    """A leaderboard limit is 1 to 1000."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput("limit", limit, f"must be an integer from 1 to {MAX_LIMIT}")
    return limit


def sort_key(profile: AgentProfile, task_type: str | None) -> tuple[int, float, str]:
    """Higher XP first, then higher average score, then agent id."""
    if task_type is None:
        return (-profile.xp, -profile.stats.average_score, profile.id)
    spec = profile.specializations[task_type]
    return (-spec.xp, -spec.avg_score, profile.id)


def row(position: int, profile: AgentProfile, task_type: str | None) -> LeaderboardRow:
    """The leaderboard row of ``profile`` at ``position``."""
    values: dict[str, object] = {
        "position": position,
        "agent_id": profile.id,
        "provider": profile.provider,
        "model": profile.model,
        "xp": profile.xp,
        "level": profile.level,
        "tasks": profile.stats.total_tasks,
        "average_score": profile.stats.average_score,
    }
    if task_type is not None:
        spec = profile.specializations[task_type]
        values.update(
            task_type=task_type,
            specialization_xp=spec.xp,
            specialization_level=spec.level,
            specialization_tasks=spec.tasks_judged,
            specialization_avg_score=spec.avg_score,
            specialization_best_score=spec.best_score,
        )
    return LeaderboardRow.model_validate(values)


def leaderboard_rows(
    profiles: Iterable[AgentProfile], task_type: str | None, limit: int
) -> list[LeaderboardRow]:
    """The top ``limit`` of ``profiles`` (those with the task type, when one is given)."""
    check_limit(limit)
    chosen = [p for p in profiles if task_type is None or task_type in p.specializations]
    chosen.sort(key=lambda p: sort_key(p, task_type))
    return [row(i, p, task_type) for i, p in enumerate(chosen[:limit], start=1)]
