"""Between two fits: one new observation moves the estimates it concerns by one filter
step, with the sources' records and the levels as the last fit left them. A pure function
of the touched agents' states, the fleet's and the evidence: it writes only those agents
(no fleet-wide state), and the next fit places the evidence exactly (``fit.py``).

- a judgment's score: its judge's leniency removed, weighed by the judge's noise and
  honesty (a judge the fit has not seen yet: the priors, so a new judge counts little);
- a verdict or a judgment with only ``success``: a probit update;
- a deliberation: its authors' skills and its shared offset solved at once from the
  peers' scores (each evaluator's leniency, noise and honesty as last fitted);
- a model change: every estimate of the agent is less sure, and its record as evaluator
  starts over.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from agentladder.domain.skill.chain import Message, Track, step
from agentladder.domain.skill.evidence import (
    AGGREGATE,
    DeliberationEvidence,
    Evidence,
    ModelChange,
    ScoreEvidence,
)
from agentladder.domain.skill.gauss import censored, on_scale, probit_update
from agentladder.domain.skill.observations import judge_source
from agentladder.domain.skill.overall import latent_parts, overall_of, predicted_of
from agentladder.domain.skill.restricted import shown
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.state import (
    OVERALL,
    AgentSkill,
    Estimate,
    FleetSkill,
    Point,
    SourceState,
    new_skill,
    new_source,
    replace,
)

__all__ = ["SkillUpdate", "apply_evidence", "overall_types", "prior_at", "shown_overall"]


@dataclass(frozen=True, slots=True)
class SkillUpdate:
    """The new states of the agents one piece of evidence touches."""

    agents: dict[str, AgentSkill]


def prior_at(skill: AgentSkill, fleet: FleetSkill, task_type: str, rules: SkillRules) -> Estimate:
    """The agent's estimate at a task type; one it has not done yet is predicted from its
    general ability and the type's level, with the learned ``type_spread``."""
    found = skill.types.get(task_type)
    if found is not None:
        return found
    level, level_var = fleet.level(task_type, rules)
    general = skill.general or Estimate(mean=0.0, var=rules.ability_sd**2)
    mean = level + general.mean
    var = level_var + general.var + fleet.type_spread(rules)
    return Estimate(mean=mean, var=var, base_mean=mean, base_var=var)


def overall_types(skill: AgentSkill, fleet: FleetSkill) -> list[str]:
    """The task types the agent's overall is the mean over: the fleet's (at its last
    fit) and the agent's own, in name order."""
    return sorted(set(fleet.levels) | set(skill.types))


def shown_overall(skill: AgentSkill, fleet: FleetSkill, rules: SkillRules) -> tuple[float, float]:
    """The overall as shown (``overall.py``: the mean of the shown task types' skills) and
    its sd, as of the agent's latest evidence; the stored estimate restricted to the scale
    when no task type is known."""
    if not fleet.levels and not skill.types:
        return on_scale(*shown(skill.overall.mean, skill.overall.var, rules), rules.interval_z)[:2]
    mean, var = latent_parts(skill, predicted_of(fleet, rules), rules)
    return overall_of(mean, var, skill.overall.var, rules)[:2]


def apply_evidence(
    states: Mapping[str, AgentSkill], fleet: FleetSkill, evidence: Evidence, rules: SkillRules
) -> SkillUpdate:
    """The new states of every agent the evidence touches (absent ones start new); none
    for a deferred judgment (its fit places it)."""
    current = {a: states.get(a) or new_skill(a, rules) for a in evidence.touched()}
    if not current:
        return SkillUpdate({})
    if isinstance(evidence, ModelChange):
        skill = current[evidence.agent_id]
        return SkillUpdate({evidence.agent_id: _model_change(skill, fleet, evidence.at, rules)})
    if isinstance(evidence, DeliberationEvidence):
        return SkillUpdate(_deliberation(current, fleet, evidence, rules))
    skill = current[evidence.agent_id]
    task_type, at = evidence.task_type, evidence.at
    prior = _drifted(prior_at(skill, fleet, task_type, rules), at, rules)
    if isinstance(evidence, ScoreEvidence) and evidence.score is not None:
        source = fleet.source(judge_source(evidence.judge), rules)
        bias, bias_var, noise = source.at_type(task_type)
        value, extra = (
            censored(evidence.score, prior.mean + bias, prior.var + bias_var + noise)
            if rules.censors(judge_source(evidence.judge))
            else (evidence.score, 0.0)
        )
        var = (noise + extra) / max(source.honesty, 1e-6) + bias_var
        message = Message(at=at, mean=value - bias, var=var, count=1)
    else:
        passed = evidence.success if isinstance(evidence, ScoreEvidence) else evidence.passed
        mean, var = probit_update(
            prior.mean, prior.var, rules.pass_threshold, passed, rules.pass_sd
        )
        precision = 1.0 / var - 1.0 / prior.var
        if precision <= 0.0:
            return SkillUpdate({evidence.agent_id: skill})
        said = (mean / var - prior.mean / prior.var) / precision
        message = Message(at=at, mean=said, var=1.0 / precision, count=1)
    changed = _moved(skill, fleet, task_type, message, rules)
    return SkillUpdate({evidence.agent_id: changed})


def _drifted(estimate: Estimate, at: float, rules: SkillRules) -> Estimate:
    """The estimate as of ``at``: it drifts from the time of its latest evidence."""
    if estimate.at is None or at <= estimate.at:
        return estimate
    days = (at - estimate.at) / 86_400.0
    return replace(estimate, var=estimate.var + rules.drift_sd_per_day**2 * days)


def _moved(
    skill: AgentSkill, fleet: FleetSkill, task_type: str, message: Message, rules: SkillRules
) -> AgentSkill:
    """The agent with its estimate at the task type moved by the message (and the overall
    estimate by its share of it)."""
    before = prior_at(skill, fleet, task_type, rules)
    track = Track(mean=before.mean, var=before.var, at=before.at, drop=before.drop,
                  rise=before.rise)  # fmt: skip
    after = step(track, message, [], rules)
    estimate = Estimate(
        mean=after.mean, var=after.var, n=before.n + message.count, at=after.at,
        drop=after.drop, rise=after.rise, base_mean=before.base_mean, base_var=before.base_var,
    )  # fmt: skip
    overall = _overall_moved(skill, fleet, task_type, before, after, message.count)
    types = dict(skill.types)
    types[task_type] = estimate
    moved = replace(skill, types=types, overall=overall)
    points: tuple[Point, ...] = (
        (message.at, task_type, after.mean, math.sqrt(after.var)),
        (message.at, OVERALL, *shown_overall(moved, fleet, rules)),
    )
    history = (*skill.history, *points)[-rules.history :] if rules.history else ()
    return replace(moved, history=history)


def _overall_moved(
    skill: AgentSkill, fleet: FleetSkill, task_type: str, before: Estimate, after: Track,
    count: int,
) -> Estimate:  # fmt: skip
    """The stored overall estimate (the mean of the latent skills at the task types known:
    ``overall_types``), whose variance carries the task types' correlation to the overall
    shown (``overall.py``), after the estimate at ``task_type`` moved from ``before`` to
    ``after``. A type already counted moves it by its share, 1/K, and its variance by its
    share of the type's (the covariances with the other types stay as the last fit left
    them). A type counted for the first time makes it a mean over one more type: the old
    overall over K-1 types and the new one's estimate, whose sd is taken as the weighted
    mean of the two sds (their correlation is not known between fits; this is its upper
    bound, so the interval is never narrower than the evidence allows; the next fit gives
    the joint one)."""
    known = set(overall_types(skill, fleet))
    overall = skill.overall
    at = after.at if overall.at is None else max(overall.at, after.at or 0.0)
    if task_type not in known:
        k = len(known) + 1
        mean = ((k - 1) * overall.mean + after.mean) / k
        sd = ((k - 1) * math.sqrt(overall.var) + math.sqrt(after.var)) / k
        var = sd * sd if known else after.var
        mean = mean if known else after.mean
    else:
        share = 1.0 / len(known)
        mean = overall.mean + share * (after.mean - before.mean)
        var = overall.var + share * share * (after.var - before.var)
    return Estimate(
        mean=mean, var=max(1e-8, var), n=overall.n + count, at=at,
        base_mean=overall.base_mean, base_var=overall.base_var,
    )  # fmt: skip


def _model_change(skill: AgentSkill, fleet: FleetSkill, at: float, rules: SkillRules) -> AgentSkill:
    """Everything known of the agent is less sure, and its record as evaluator starts over."""
    extra = rules.model_change_sd**2
    types = {
        name: replace(
            _drifted(e, at, rules),
            var=_drifted(e, at, rules).var + extra,
            at=max(at, e.at or at),
            drop=0.0,
            rise=0.0,
        )
        for name, e in skill.types.items()
    }
    overall = _drifted(skill.overall, at, rules)
    overall = replace(overall, var=overall.var + extra, at=max(at, overall.at or at))
    general = skill.general
    if general is not None:
        general = replace(general, var=general.var + extra)
    changed = replace(
        skill, types=types, overall=overall, general=general, evaluator=new_source(rules),
        model_changes=skill.model_changes + 1,
    )  # fmt: skip
    point: Point = (at, OVERALL, *shown_overall(changed, fleet, rules))
    history = (*skill.history, point)[-rules.history :] if rules.history else ()
    return replace(changed, history=history)


def _deliberation(
    current: dict[str, AgentSkill],
    fleet: FleetSkill,
    evidence: DeliberationEvidence,
    rules: SkillRules,
) -> dict[str, AgentSkill]:
    """The authors' skills moved by the peers' scores (each evaluator's leniency, noise and
    honesty as last fitted). Where the fleet has been fitted and every author's estimate is
    settled (its variance at most the deliberation offset's), the authors and the shared
    offset are solved at once (the
    other authors' scores say how easy the task was); otherwise each author by what its
    own scores say, the offset one more error of their mean. Between fits nothing holds the
    fleet's level: solved at once from vague priors (a new fleet's), the offset took up a
    share of the fleet's distance from the prior level, and honest peers' estimates read
    0.4 low until the next fit; an author's own scores have no such share."""
    task_type, at = evidence.task_type, evidence.at
    authors = sorted(
        {e.author for e in evidence.evaluations} | {r.author for r in evidence.aggregated}
    )
    if not authors:
        return current
    priors = {
        a: _drifted(prior_at(current[a], fleet, task_type, rules), at, rules) for a in authors
    }
    rows: list[tuple[str, float, float]] = []
    for ev in evidence.evaluations:
        source = current[ev.evaluator].evaluator
        rows.append((ev.author, *_scored(ev.score, source, task_type)))
    aggregate = fleet.source(AGGREGATE, rules)
    for reported in evidence.aggregated:
        rows.append((reported.author, *_scored(reported.score, aggregate, task_type)))
    offset = fleet.difficulty(rules)
    if fleet.fit is not None and all(p.var <= offset for p in priors.values()):
        said = _jointly(authors, priors, rows, offset)
    else:
        said = _alone(authors, rows, offset)
    out = dict(current)
    for author, (mean, var, count) in said.items():
        message = Message(at=at, mean=mean, var=var, count=count)
        out[author] = _moved(current[author], fleet, task_type, message, rules)
    return out


def _alone(
    authors: list[str], rows: list[tuple[str, float, float]], offset: float
) -> dict[str, tuple[float, float, int]]:
    """Per author, what its own scores say (mean, variance, count): their weighted mean,
    the deliberation's offset one more error of it."""
    out = {}
    for author in authors:
        mine = [(value, weight) for a, value, weight in rows if a == author]
        total = sum(weight for _, weight in mine)
        mean = sum(value * weight for value, weight in mine) / total
        out[author] = (mean, 1.0 / total + offset, len(mine))
    return out


def _jointly(
    authors: list[str], priors: dict[str, Estimate], rows: list[tuple[str, float, float]],
    offset: float,
) -> dict[str, tuple[float, float, int]]:  # fmt: skip
    """Per author, what the deliberation's scores say of it (mean, variance, count) once
    the authors' skills and the shared offset are solved at once from their priors."""
    index = {a: i for i, a in enumerate(authors)}
    n = len(authors) + 1  # the authors, then the offset
    precision = np.zeros((n, n))
    shift = np.zeros(n)
    for a, i in index.items():
        precision[i, i] = 1.0 / priors[a].var
        shift[i] = priors[a].mean / priors[a].var
    precision[-1, -1] = 1.0 / offset
    counts = dict.fromkeys(authors, 0)
    for author, value, weight in rows:
        i = index[author]
        for j in (i, n - 1):
            shift[j] += weight * value
            for k in (i, n - 1):
                precision[j, k] += weight
        counts[author] += 1
    cov = np.linalg.inv(precision)
    mean = cov @ shift
    out = {}
    for a, i in index.items():
        post_mean, post_var = float(mean[i]), float(cov[i, i])
        prior = priors[a]
        gained = 1.0 / post_var - 1.0 / prior.var
        if gained <= 0.0 or counts[a] == 0:
            continue
        said = (post_mean / post_var - prior.mean / prior.var) / gained
        out[a] = (said, 1.0 / gained, counts[a])
    return out


def _scored(score: float, source: SourceState, task_type: str) -> tuple[float, float]:
    """One peer score as (value without the source's leniency, weight). A peer's score at
    0 or 10 is that score (only a judge named in ``censored_judges`` is censored)."""
    bias, bias_var, noise = source.at_type(task_type)
    weight = max(source.honesty, 1e-6) / (noise + bias_var)
    return score - bias, weight
