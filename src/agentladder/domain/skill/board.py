"""Reading estimates: a skill with its interval as of a moment, and leaderboards in tiers.

What is shown is the posterior restricted to the scale (a skill lies within 0-10): its
mean, sd and 95% interval, so ``0 <= low <= skill <= high <= 10`` always. An estimate
widens with the days since its latest evidence (``drift_sd_per_day``). Overall is the mean
of the agent's task types as shown, each widened on its own (``overall.py``).

An estimate whose sd is above ``provisional_sd`` is provisional: too little evidence to
place it, so it is given no tier (its width alone would put it beside any agent) and the
board lists it after the settled agents. Tiers are the settled agents', listed by skill:
tier 1 begins at the best and holds each next agent the evidence does not separate from
it (their difference under ``interval_z`` times its sd, the sds taken as independent);
the first agent it separates begins tier 2, which runs the same way from that agent, and
so on. Every agent of a tier is within the evidence of its tier's best, so a chain of
overlapping intervals cannot hold a clearly worse agent in a better tier.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from agentladder.domain.skill.chain import DAY_S
from agentladder.domain.skill.gauss import on_scale
from agentladder.domain.skill.live import overall_types, prior_at
from agentladder.domain.skill.overall import Shown, overall_of, shown
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.state import AgentSkill, Estimate, FleetSkill

__all__ = ["SkillEntry", "separated", "shown", "skill_board", "skill_view", "tiers"]


class SkillEntry(BaseModel):
    """One agent's skill at one task type (or overall: ``task_type`` None), as shown; its
    tier on a board (None off a board, and for a provisional estimate)."""

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


def _widened(estimate: Estimate, now: float, rules: SkillRules) -> float:
    """The estimate's variance as of ``now``: it drifts from its latest evidence."""
    if estimate.at is None or now <= estimate.at:
        return estimate.var
    return estimate.var + rules.drift_sd_per_day**2 * (now - estimate.at) / DAY_S


def skill_view(
    skill: AgentSkill, fleet: FleetSkill, task_type: str | None, now: float, rules: SkillRules
) -> SkillEntry:
    """The estimate as of ``now``; a task type the agent has not done yet reads as
    predicted from its general ability, with no observations. Overall (``task_type``
    None): the mean of its skills at the fleet's task types as they read now
    (``overall.py``, docs/skill.md)."""
    if task_type is None:
        estimate = skill.overall
        centre, spread, low, high = _overall(skill, fleet, now, rules)
    else:
        estimate = prior_at(skill, fleet, task_type, rules)
        mean, sd = shown(estimate.mean, _widened(estimate, now, rules), rules)
        centre, spread, low, high = on_scale(mean, sd, rules.interval_z)
    return SkillEntry(
        agent_id=skill.agent_id,
        task_type=task_type,
        skill=centre,
        sd=spread,
        low=low,
        high=high,
        observations=estimate.n,
        provisional=spread > rules.provisional_sd,
    )


def _overall(skill: AgentSkill, fleet: FleetSkill, now: float, rules: SkillRules) -> Shown:
    """The overall as of ``now``: its task types each widened on its own, then combined
    (``overall.py``); with no task type known at all, the stored estimate (a new agent's
    prior) restricted to the scale."""
    names = overall_types(skill, fleet)
    if not names:
        mean, sd = shown(skill.overall.mean, _widened(skill.overall, now, rules), rules)
        return on_scale(mean, sd, rules.interval_z)
    estimates = [prior_at(skill, fleet, t, rules) for t in names]
    widened = [_widened(e, now, rules) for e in estimates]
    return overall_of(estimates, skill.overall.var, rules, widened)


def skill_board(
    skills: Iterable[AgentSkill],
    fleet: FleetSkill,
    task_type: str | None,
    now: float,
    rules: SkillRules,
) -> list[SkillEntry]:
    """Every agent with evidence (at the task type, when one is named): the settled ones
    best first, in tiers, then the provisional ones best first, with no tier; ties by
    agent id."""
    entries = [
        skill_view(s, fleet, task_type, now, rules)
        for s in skills
        if (s.overall.n > 0 if task_type is None else task_type in s.types)
    ]
    entries.sort(key=lambda e: (e.provisional, -e.skill, e.agent_id))
    settled = [e for e in entries if not e.provisional]
    grouped = tiers(settled, rules.interval_z)
    return [e.model_copy(update={"tier": grouped.get(e.agent_id)}) for e in entries]


def separated(upper: SkillEntry, lower: SkillEntry, z: float) -> bool:
    """Whether the evidence puts ``upper`` above ``lower``: the difference of their skills
    is at least ``z`` times its sd. Values that are not numbers separate nothing."""
    spread = math.sqrt(upper.sd * upper.sd + lower.sd * lower.sd)
    return upper.skill - lower.skill >= z * spread


def tiers(entries: list[SkillEntry], z: float = 1.959963984540054) -> dict[str, int]:
    """Each entry's tier, the entries (the board's settled ones) listed best first: tier 1
    begins at the first entry and holds each next one the evidence does not separate from
    it; the first entry it separates begins the next tier, which runs the same way from
    that entry. Tiers count up down the list; every entry is within the evidence of its
    tier's first. One pass."""
    grouped: dict[str, int] = {}
    tier, best = 0, None
    for entry in entries:
        if best is None or separated(best, entry, z):
            tier, best = tier + 1, entry
        grouped[entry.agent_id] = tier
    return grouped
