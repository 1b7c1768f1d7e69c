"""Reading estimates: a skill with its interval as of a moment, and leaderboards in tiers.

What is shown is the posterior restricted to the scale (a skill lies within 0-10): its
mean, sd and 95% interval, so ``0 <= low <= skill <= high <= 10`` always. An estimate
widens with the days since its latest evidence (``drift_sd_per_day``).

A leaderboard never claims an order it cannot support: two agents are in different tiers
only when the evidence separates them, i.e. their difference is at least ``interval_z``
times its sd (the sds taken as independent, which overstates the difference's uncertainty
when two estimates share evidence: the board errs on the side of fewer tiers). Tiers are
runs of the board listed by skill, cut only where every agent above the cut is separated
from every agent below it, so one wide interval low on the board can hold several tiers
together. An estimate whose sd is above ``provisional_sd`` is marked provisional.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
from pydantic import BaseModel, ConfigDict

from agentladder.domain.skill.chain import DAY_S
from agentladder.domain.skill.gauss import on_scale
from agentladder.domain.skill.live import prior_at
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.state import AgentSkill, Estimate, FleetSkill

__all__ = ["SkillEntry", "separated", "shown", "skill_board", "skill_view", "tiers"]


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


def _widened(estimate: Estimate, now: float, rules: SkillRules) -> float:
    """The estimate's variance as of ``now``: it drifts from its latest evidence."""
    if estimate.at is None or now <= estimate.at:
        return estimate.var
    return estimate.var + rules.drift_sd_per_day**2 * (now - estimate.at) / DAY_S


def skill_view(
    skill: AgentSkill, fleet: FleetSkill, task_type: str | None, now: float, rules: SkillRules
) -> SkillEntry:
    """The estimate as of ``now``, with the error its task type's scale shares (the
    anchor's: docs/skill.md, "The scale") and never surer than ``sd_floor``; a task type
    the agent has not done yet reads as
    predicted from its general ability, with no observations. Overall (``task_type``
    None): the mean over the fleet's task types (docs/skill.md)."""
    estimate = skill.overall if task_type is None else prior_at(skill, fleet, task_type, rules)
    var = _widened(estimate, now, rules) + fleet.anchor_var(task_type)
    mean, sd = shown(estimate.mean, max(var, rules.sd_floor**2), rules)
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


def shown(centre: float, var: float, rules: SkillRules) -> tuple[float, float]:
    """A centre and sd that can be shown, whatever the state holds: a variance that is
    not a positive finite number reads as a new agent's (nothing is known), and so does a
    centre that is not finite. Never NaN or infinite, so every comparison of the board
    is decided and its JSON is valid."""
    prior = rules.level_sd**2 + rules.ability_sd**2
    if not math.isfinite(var) or var <= 0.0:
        var = prior
    if not math.isfinite(centre):
        centre, var = rules.prior_mean, max(var, prior)
    return centre, math.sqrt(var)


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
    grouped = tiers(entries, rules.interval_z)
    return [e.model_copy(update={"tier": grouped[e.agent_id]}) for e in entries]


def separated(upper: SkillEntry, lower: SkillEntry, z: float) -> bool:
    """Whether the evidence puts ``upper`` above ``lower``: the difference of their skills
    is at least ``z`` times its sd."""
    spread = math.sqrt(upper.sd * upper.sd + lower.sd * lower.sd)
    return upper.skill - lower.skill >= z * spread


def tiers(entries: list[SkillEntry], z: float = 1.959963984540054) -> dict[str, int]:
    """Each entry's tier, the entries listed best first: a new tier starts between two
    neighbours of the list only where every entry above is separated from every entry
    below (a pair in different tiers is always separated; one wide interval low on the
    list can hold several tiers together). Values that are not numbers separate nothing.
    Quadratic in the entries, vectorized a block of rows at a time."""
    count = len(entries)
    if count == 0:
        return {}
    skill = np.array([e.skill for e in entries], dtype=np.float64)
    var = np.array([e.sd * e.sd for e in entries], dtype=np.float64)
    # reach[i]: the lowest position held together with some entry above or at i
    reach = np.arange(count)
    for start in range(0, count, _BLOCK):
        below = np.arange(start, min(count, start + _BLOCK))
        with np.errstate(invalid="ignore", over="ignore"):
            apart = skill[None, :] - skill[below, None] >= z * np.sqrt(
                var[None, :] + var[below, None]
            )
        upper = np.arange(count)[None, :] < below[:, None]
        held = upper & ~apart  # entries above each row that it is not separated from
        top = np.where(held.any(axis=1), held.argmax(axis=1), below)
        np.maximum.at(reach, top, below)
    grouped: dict[str, int] = {}
    tier, furthest = 1, 0
    for position, entry in enumerate(entries):
        if position > furthest:  # nothing above is held together with anything here
            tier += 1
        furthest = max(furthest, int(reach[position]))
        grouped[entry.agent_id] = tier
    return grouped


_BLOCK = 512
