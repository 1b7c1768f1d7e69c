"""One piece of evidence folded into the agents' skill states: a pure function.

A deliberation is one small linear-Gaussian model, solved exactly, then projected back
onto each agent's independent estimates (assumed-density filtering, as TrueSkill does):

    score = level(task type) + quality(author, task type) + leniency(evaluator)
            + offset(round) + noise

(``solve.py``). An agent's estimate at a task type is kept relative to the fleet's
level there (``FleetSkill``); what is shown is level plus estimate. Judgments and
verdicts are on the absolute scale and are moved into that frame.

The overall estimate takes, from every update of a task type's estimate, the same
evidence (the Gaussian message: posterior over prior), so it pools all task types; a
task type an agent has not done yet starts from its overall estimate, widened by
``type_spread`` (partial pooling).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from agentladder.domain.skill.evidence import (
    DeliberationEvidence,
    Evidence,
    ModelChange,
    ScoreEvidence,
)
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.solve import solve_deliberation
from agentladder.domain.skill.state import (
    OVERALL,
    AgentSkill,
    Estimate,
    EvaluatorState,
    FleetSkill,
    Point,
    new_evaluator,
    new_skill,
    replace,
)

__all__ = [
    "SkillUpdate", "apply_evidence", "overall_level", "type_prior", "watched", "widened",
]  # fmt: skip

DAY_S = 86_400.0


@dataclass(frozen=True, slots=True)
class SkillUpdate:
    """What one piece of evidence changes: the agents it touches, and the fleet's state
    (None when unchanged: only a deliberation changes it)."""

    agents: dict[str, AgentSkill]
    fleet: FleetSkill | None = None


def apply_evidence(
    states: Mapping[str, AgentSkill],
    fleet: FleetSkill,
    evidence: Evidence,
    rules: SkillRules,
) -> SkillUpdate:
    """The new states of every agent the evidence touches (absent ones start new), and
    of the fleet."""
    current = {agent: states.get(agent) or new_skill(agent, rules) for agent in evidence.touched()}
    if isinstance(evidence, DeliberationEvidence):
        return _deliberation(current, fleet, evidence, rules)
    skill = current[evidence.agent_id]
    if isinstance(evidence, ModelChange):
        return SkillUpdate({evidence.agent_id: _model_change(skill, evidence.at, rules)})
    level, _ = fleet.level(evidence.task_type)
    prior = _moved(type_prior(skill, fleet, evidence.task_type, evidence.at, rules), rules)
    if isinstance(evidence, ScoreEvidence) and evidence.score is not None:
        noise = rules.judgment_noise_sd**2
        var = 1.0 / (1.0 / prior.var + 1.0 / noise)
        mean = var * (prior.mean / prior.var + (evidence.score - level) / noise)
    else:
        passed = evidence.success if isinstance(evidence, ScoreEvidence) else evidence.passed
        mean, var = _probit(prior, rules.pass_threshold - level, passed, rules.pass_sd)
    changed = _record(skill, fleet, evidence.task_type, evidence.at, prior, (mean, var), 1, rules)
    return SkillUpdate({evidence.agent_id: changed})


def widened(estimate: Estimate, at: float, cap: float, rules: SkillRules) -> Estimate:
    """The estimate as of ``at``: uncertainty grows with the days since its last evidence."""
    if estimate.at is None or rules.drift_sd_per_day == 0.0 or at <= estimate.at:
        return estimate
    grown = estimate.var + rules.drift_sd_per_day**2 * ((at - estimate.at) / DAY_S)
    return replace(estimate, var=min(cap, max(estimate.var, grown)))


def overall_level(skill: AgentSkill, fleet: FleetSkill) -> tuple[float, float]:
    """The level of the agent's overall estimate: its task types' levels, weighed by the
    observations it has at each (its overall estimate pools them)."""
    return _level_of(skill.types, fleet)


def _level_of(types: Mapping[str, Estimate], fleet: FleetSkill) -> tuple[float, float]:
    total = 0
    for estimate in types.values():
        total += estimate.n
    if total == 0:
        return 0.0, 0.0
    mean = var = 0.0
    for name, estimate in sorted(types.items()):
        level, level_var = fleet.level(name)
        mean += estimate.n / total * level
        var += estimate.n / total * level_var
    return mean, var


def type_prior(
    skill: AgentSkill, fleet: FleetSkill, task_type: str, at: float, rules: SkillRules
) -> Estimate:
    """The agent's estimate at a task type as of ``at``, relative to the type's level; for
    a new task type its overall estimate, widened by ``type_spread`` (no observations)."""
    cap = rules.prior_var + rules.type_spread**2
    found = skill.types.get(task_type)
    if found is not None:
        return widened(found, at, cap, rules)
    overall = widened(skill.overall, at, rules.prior_var, rules)
    here, _ = fleet.level(task_type)
    there, _ = overall_level(skill, fleet)
    return Estimate(
        mean=overall.mean + there - here, var=min(cap, overall.var + rules.type_spread**2)
    )


def _moved(prior: Estimate, rules: SkillRules) -> Estimate:
    """The prior of an update: skill may have moved a little since the last one."""
    return replace(prior, var=prior.var + rules.dynamics_sd**2)


def _record(
    skill: AgentSkill,
    fleet: FleetSkill,
    task_type: str,
    at: float,
    prior: Estimate,
    typed: tuple[float, float],
    count: int,
    rules: SkillRules,
    evaluator: EvaluatorState | None = None,
) -> AgentSkill:
    """The agent with its task type's estimate moved from ``prior`` to ``typed`` (mean,
    variance), its overall estimate given the same evidence (posterior over prior), and
    its record as evaluator replaced when one is given. (Built without re-validation:
    every value here comes from validated ones by arithmetic; this is the hot path.)"""
    mean, var = typed
    precision = 1.0 / var - 1.0 / prior.var
    if precision > 0.0:
        shift = mean / var - prior.mean / prior.var
    else:
        precision = shift = 0.0
    found = skill.types.get(task_type)
    seen = 0 if found is None else found.n
    before = widened(skill.overall, at, rules.prior_var, rules)
    moved_var = before.var + rules.dynamics_sd**2
    overall_var = 1.0 / (1.0 / moved_var + precision)
    overall_mean = overall_var * (before.mean / moved_var + shift)
    drop, rise, changed = watched(found, prior, precision, shift, rules)
    if changed:  # the skill has moved: what was known of it counts for less
        extra = rules.change_sd**2
        var = min(rules.prior_var + rules.type_spread**2, var + extra)
        overall_var = min(rules.prior_var, overall_var + extra)
    types = dict(skill.types)
    types[task_type] = Estimate(mean=mean, var=var, n=seen + count, at=at, drop=drop, rise=rise)
    overall = Estimate(mean=overall_mean, var=overall_var, n=skill.overall.n + count, at=at)
    level, level_var = fleet.level(task_type)
    there, there_var = _level_of(types, fleet)
    history: tuple[Point, ...] = ()
    if rules.history:
        history = (
            *skill.history[-rules.history + 2 :],
            (at, task_type, level + mean, math.sqrt(var + level_var)),
            (at, OVERALL, there + overall_mean, math.sqrt(overall_var + there_var)),
        )[-rules.history :]
    return AgentSkill(
        agent_id=skill.agent_id,
        overall=overall,
        types=types,
        evaluator=skill.evaluator if evaluator is None else evaluator,
        model_changes=skill.model_changes,
        history=history,
    )


def watched(
    found: Estimate | None, prior: Estimate, precision: float, shift: float, rules: SkillRules
) -> tuple[float, float, bool]:
    """The change detector after one update: a two-sided CUSUM (Page's) of the evidence's
    standardized innovation, how far what this evidence alone says of the quality (its
    message: ``shift / precision``, of variance ``1 / precision``) lies from the prior.
    Each innovation counts at most half the threshold, so that no one outlying piece of
    evidence is a change by itself. Returns the new ``drop`` and ``rise`` and whether
    either crossed ``change_threshold`` (both then start again from 0)."""
    drop = 0.0 if found is None else found.drop
    rise = 0.0 if found is None else found.rise
    if precision <= 0.0 or rules.change_threshold == 0.0:
        return drop, rise, False
    z = (shift / precision - prior.mean) / math.sqrt(prior.var + 1.0 / precision)
    half = rules.change_threshold / 2.0  # no one piece of evidence is a change by itself
    z = max(-half, min(half, z))
    drop = max(0.0, drop - z - rules.change_allowance)
    rise = max(0.0, rise + z - rules.change_allowance)
    if drop > rules.change_threshold or rise > rules.change_threshold:
        return 0.0, 0.0, True
    return drop, rise, False


def _with_history(skill: AgentSkill, points: tuple[Point, ...], rules: SkillRules) -> AgentSkill:
    history = (*skill.history, *points)[-rules.history :] if rules.history else ()
    return replace(skill, history=history)


def _probit(prior: Estimate, threshold: float, passed: bool, sd: float) -> tuple[float, float]:
    """P(pass) = Φ((skill - threshold) / sd): the Gaussian closest to the posterior."""
    sign = 1.0 if passed else -1.0
    total = math.sqrt(prior.var + sd * sd)
    z = sign * (prior.mean - threshold) / total
    ratio = _mills(z)
    mean = prior.mean + sign * prior.var * ratio / total
    var = prior.var * max(1e-9, 1.0 - prior.var / total**2 * ratio * (ratio + z))
    return mean, var


def _mills(z: float) -> float:
    """φ(z) / Φ(z), stable in the left tail."""
    if z < -30.0:
        return -z
    cdf = 0.5 * math.erfc(-z / math.sqrt(2.0))
    return math.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi) / cdf


def _later(seen: float | None, at: float) -> float | None:
    return None if seen is None else max(seen, at)


def _model_change(skill: AgentSkill, at: float, rules: SkillRules) -> AgentSkill:
    """Everything known of the agent is less sure, and its record as evaluator starts over."""
    extra = rules.model_change_sd**2
    cap = rules.prior_var + rules.type_spread**2
    overall = widened(skill.overall, at, rules.prior_var, rules)
    # widened up to now, so the time is now (else a later read would widen it again)
    overall = replace(
        overall, var=min(rules.prior_var, overall.var + extra), at=_later(overall.at, at)
    )
    types = {}
    for name, found in skill.types.items():
        estimate = widened(found, at, cap, rules)
        types[name] = replace(
            estimate, var=min(cap, estimate.var + extra), at=_later(estimate.at, at),
            drop=0.0, rise=0.0,
        )  # fmt: skip
    changed = replace(
        skill,
        overall=overall,
        types=types,
        evaluator=new_evaluator(rules),
        model_changes=skill.model_changes + 1,
    )
    return _with_history(changed, ((at, OVERALL, overall.mean, math.sqrt(overall.var)),), rules)


def _deliberation(
    current: dict[str, AgentSkill],
    fleet: FleetSkill,
    evidence: DeliberationEvidence,
    rules: SkillRules,
) -> SkillUpdate:
    """Every author's quality, every evaluator's leniency, noise and honesty, the task
    type's level and the offsets' spread, at once."""
    task_type, at = evidence.task_type, evidence.at
    found = fleet.levels.get(task_type)
    level = found or Estimate(mean=0.0, var=rules.prior_var)
    priors = {
        author: _moved(type_prior(current[author], fleet, task_type, at, rules), rules)
        for author in evidence.touched()
    }
    solved = solve_deliberation(
        evidence,
        priors,
        {a: s.evaluator for a, s in current.items()},
        (level.mean, level.var),
        (fleet.offset_var(rules), fleet.leniency_var(rules)),
        rules,
    )
    new_level = Estimate(
        mean=level.mean + solved.level[0],
        var=solved.level[1] + rules.dynamics_sd**2,
        n=level.n + 1,
        at=at,
    )
    shape = fleet.offset_shape if fleet.offset_shape is not None else rules.noise_weight / 2.0
    rate = fleet.offset_rate
    if rate is None:
        rate = shape * rules.difficulty_sd**2
    newcomers = sum(1 for e in solved.evaluators if current[e].evaluator.n == 0)
    fsum = math.fsum
    new_fleet = FleetSkill(
        levels={**fleet.levels, task_type: new_level},
        offset_shape=shape + len(solved.offsets) / 2.0,
        offset_rate=rate + fsum(m * m + v for m, v in solved.offsets) / 2.0,
        leniency_weight=fleet.leniency_weight + fsum(w for w, _ in solved.leniencies),
        leniency_sum=fleet.leniency_sum + fsum(w * b for w, b in solved.leniencies),
        leniency_squares=fleet.leniency_squares + fsum(w * b * b for w, b in solved.leniencies),
        evaluators=fleet.evaluators + newcomers,
    )
    updated = dict(current)
    for agent, evaluator in solved.evaluators.items():
        if agent not in solved.authors:
            updated[agent] = replace(updated[agent], evaluator=evaluator)
    for author, (mean, var, count) in solved.authors.items():
        updated[author] = _record(
            updated[author], new_fleet, task_type, at, priors[author], (mean, var), count,
            rules, solved.evaluators.get(author),
        )  # fmt: skip
    return SkillUpdate(updated, new_fleet)
