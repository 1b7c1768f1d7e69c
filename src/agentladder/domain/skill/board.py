"""Reading estimates: a skill with its interval as of a moment, and leaderboards in tiers.

A leaderboard never claims an order it cannot support: tier 1 is the best agent and
every agent whose 95% interval overlaps the best one's; tier 2 the same among the rest,
and so on. The board is listed by skill, and an agent listed below one of tier k is in
tier k or later (a wide interval below a narrow one does not climb back). An estimate
whose sd is above ``provisional_sd`` is marked provisional.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.state import AgentSkill, FleetSkill
from agentladder.domain.skill.update import type_prior, widened

__all__ = ["SkillEntry", "skill_board", "skill_view"]


class SkillEntry(BaseModel):
    """One agent's skill at one task type (or overall: ``task_type`` None), as shown."""

    model_config = ConfigDict(frozen=True)

    agent_id: str
    task_type: str | None
    skill: float
    sd: float
    low: float
    high: float
    observations: int
    provisional: bool
    tier: int | None = None


def skill_view(
    skill: AgentSkill, fleet: FleetSkill, task_type: str | None, now: float, rules: SkillRules
) -> SkillEntry:
    """The estimate as of ``now`` (widened by inactivity) on the absolute scale (the
    fleet's level plus the agent's estimate); a task type the agent has not done yet reads
    as its pooled prior, with no observations. Overall (``task_type`` None): the mean over
    the fleet's task types."""
    if task_type is None:
        centre, var = _overall(skill, fleet, now, rules)
        observations = skill.overall.n
    else:
        estimate = type_prior(skill, fleet, task_type, now, rules)
        level, level_var = fleet.level(task_type)
        centre, var = level + estimate.mean, estimate.var + level_var
        observations = estimate.n
    centre, sd = shown(centre, var, rules)
    half = rules.interval_z * sd
    return SkillEntry(
        agent_id=skill.agent_id,
        task_type=task_type,
        skill=_on_scale(centre),
        sd=sd,
        low=_on_scale(centre - half),
        high=_on_scale(centre + half),
        observations=observations,
        provisional=sd > rules.provisional_sd,
    )


def shown(centre: float, var: float, rules: SkillRules) -> tuple[float, float]:
    """A centre and sd that can be shown, whatever the state holds: a variance that is
    not a positive finite number reads as a new agent's (nothing is known), and so does a
    centre that is not finite. Never NaN or infinite, so every comparison of the board
    is decided and its JSON is valid."""
    if not math.isfinite(var) or var <= 0.0:
        var = rules.prior_var
    if not math.isfinite(centre):
        centre, var = rules.prior_mean, max(var, rules.prior_var)
    return centre, math.sqrt(var)


def _on_scale(value: float) -> float:
    """Within 0-10 (a clipped interval is never inverted: both ends are clipped alike)."""
    return min(10.0, max(0.0, value))


def _overall(
    skill: AgentSkill, fleet: FleetSkill, now: float, rules: SkillRules
) -> tuple[float, float]:
    """The overall skill: the mean of the agent's skills at every task type the fleet
    knows (its pooled prior where it has no evidence), with its variance (the anchor's,
    common to every task type, counted once)."""
    names = sorted(set(skill.types) | set(fleet.levels))
    if not names:
        estimate = widened(skill.overall, now, rules.prior_var, rules)
        return estimate.mean, estimate.var
    anchor = fleet.anchor_var()
    centre = var = 0.0
    for name in names:
        estimate = type_prior(skill, fleet, name, now, rules)
        level, level_var = fleet.level(name)
        centre += (level + estimate.mean) / len(names)
        var += (estimate.var + level_var - anchor) / len(names) ** 2
    return centre, var + anchor


def skill_board(
    skills: Iterable[AgentSkill],
    fleet: FleetSkill,
    task_type: str | None,
    now: float,
    rules: SkillRules,
) -> list[SkillEntry]:
    """Every agent with evidence (at the task type, when one is named), best first, in
    tiers; ties by agent id."""
    entries = [
        skill_view(s, fleet, task_type, now, rules)
        for s in skills
        if (s.overall.n > 0 if task_type is None else task_type in s.types)
    ]
    entries.sort(key=lambda e: (-e.skill, e.agent_id))
    grouped = tiers(entries)
    tiered = []
    floor = 1
    for entry in entries:  # listed by skill, so a tier never goes back up the list
        floor = max(floor, grouped[entry.agent_id])
        tiered.append(entry.model_copy(update={"tier": floor}))
    return tiered


def tiers(entries: list[SkillEntry]) -> dict[str, int]:
    """Each entry's tier: the first entry left and every one left whose interval reaches
    its low end, then the same among the rest. Every pass takes at least the first entry
    (also when its own interval is inverted or not a number), so it ends after at most
    one pass per entry whatever the values."""
    grouped: dict[str, int] = {}
    tier = 0
    rest = entries
    while rest:
        tier += 1
        best, others = rest[0], rest[1:]
        grouped[best.agent_id] = tier
        rest = []
        for entry in others:
            if entry.high >= best.low:
                grouped[entry.agent_id] = tier
            else:
                rest.append(entry)
    return grouped
