"""Leaderboard ordering and rows, shared by the stores that sort in Python."""

from __future__ import annotations

from collections.abc import Iterable

from agentladder.domain.levels import Level
from agentladder.domain.profile import AgentProfile
from agentladder.errors import InvalidInput
from agentladder.store.records import LeaderboardRow

__all__ = [
    "MAX_LIMIT", "RowFacts", "check_limit", "leaderboard_rows", "row", "row_facts",
    "row_from_facts", "sort_key",
]  # fmt: skip

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


_Overall = tuple[str, str, int, str, int, float]  # provider, model, xp, level, tasks, avg
_Spec = tuple[str, int, str, int, float, float]  # task type, xp, level, tasks, avg, best
RowFacts = tuple[_Overall, tuple[_Spec, ...]]
"""What an agent's leaderboard rows show, as plain strings and numbers (a tuple of these
costs the garbage collector nothing, unlike the profile it comes from)."""


def row_facts(profile: AgentProfile) -> RowFacts:
    """The figures of ``profile``'s rows, overall and for each of its task types."""
    stats = profile.stats
    overall = (
        profile.provider, profile.model, profile.xp, profile.level.value, stats.total_tasks,
        stats.average_score,
    )  # fmt: skip
    specs = tuple(
        (name, s.xp, s.level.value, s.tasks_judged, s.avg_score, s.best_score)
        for name, s in profile.specializations.items()
    )
    return overall, specs


def row_from_facts(
    position: int, agent_id: str, facts: RowFacts, task_type: str | None
) -> LeaderboardRow:
    """The leaderboard row at ``position`` of the agent whose figures are ``facts``."""
    provider, model, xp, level, tasks, average = facts[0]
    values: dict[str, object] = {
        "position": position, "agent_id": agent_id, "provider": provider, "model": model,
        "xp": xp, "level": Level(level), "tasks": tasks, "average_score": average,
    }  # fmt: skip
    for name, spec_xp, spec_level, spec_tasks, spec_avg, spec_best in facts[1]:
        if name == task_type:
            values.update(
                task_type=name, specialization_xp=spec_xp, specialization_level=Level(spec_level),
                specialization_tasks=spec_tasks, specialization_avg_score=spec_avg,
                specialization_best_score=spec_best,
            )  # fmt: skip
    return LeaderboardRow.model_validate(values)


def row(position: int, profile: AgentProfile, task_type: str | None) -> LeaderboardRow:
    """The leaderboard row of ``profile`` at ``position``."""
    return row_from_facts(position, profile.id, row_facts(profile), task_type)


def leaderboard_rows(
    profiles: Iterable[AgentProfile], task_type: str | None, limit: int
) -> list[LeaderboardRow]:
    """The top ``limit`` of ``profiles`` (those with the task type, when one is given)."""
    check_limit(limit)
    chosen = [p for p in profiles if task_type is None or task_type in p.specializations]
    chosen.sort(key=lambda p: sort_key(p, task_type))
    return [row(i, p, task_type) for i, p in enumerate(chosen[:limit], start=1)]
