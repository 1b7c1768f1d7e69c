"""Overall: one agent's skill over the fleet's task types, as its task types are shown.

The overall skill is the mean of the agent's skills at the task types, **each as it is
shown** (the posterior restricted to the 0-10 scale: ``gauss.on_scale``; a type the agent
has not done yet at its prediction: ``live.prior_at``). So an agent whose task types read
x_1 ... x_K reads mean(x_i) overall, near the top of the scale too (the mean of the latent
skills, restricted afterwards, read 9.90 where its types' shown skills averaged 9.29).

Its sd is that of the latent mean under the fit's joint posterior, narrowed as the
restriction narrows the task types. The states keep the variance V of the mean of the
latent skills (``AgentSkill.overall``: made at the fit by ``snapshot.py`` from the joint
posterior, so that estimates that share evidence, such as one general ability copied into
several unseen types, are not averaged as if independent; moved between fits by
``live._overall_moved``). As of the moment read, V has widened with the days since the
agent's latest evidence, as every estimate does (``board.py``: ``drift_sd_per_day``, the
drift taken as shared by the agent's task types, as it was before the overall was made
of its types), and each type's latent sd u_i with the days since its own; the
restriction to the scale narrows each u_i to the shown s_i (a skill cannot pass 10, so
the posterior near 10 is the part below it), and the overall's sd is

    sqrt(V) * (sum s_i) / (sum u_i),

the latent one narrowed by the types' average factor. It is the joint posterior's where
no type is narrowed, and exact where every type is narrowed alike or the types are fully
correlated; against the joint covariance with each type narrowed by its own factor it
measured within 1.6% (48 agents from 0.3 to 9.95 at eight task types, some not done:
``benchmarks/bench_overall.py``, docs/benchmarks.md).

Its 95% interval reaches ``interval_z`` sd on each side, corrected for the skew the
restriction gives the task types near an end of the scale (a type pressed against 10 has
a short upper half) as far as their mean keeps it: the types' half-widths per sd,
averaged, differ from ``interval_z`` by some amount on each side, and the overall's by that
times K sd / sum s_i (1 for one type, or types that move together: an agent seen at one
task type reads overall exactly as that type; 1/sqrt(K) for K independent types alike,
the factor by which the skew of their mean shrinks). It is cut to the scale (the overall
cannot lie outside it, so the cut loses no coverage): ``0 <= low <= skill <= high <= 10``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from agentladder.domain.skill.chain import DAY_S
from agentladder.domain.skill.gauss import HIGH, LOW, on_scale
from agentladder.domain.skill.restricted import Floats, on_scale_many, shown, shown_many
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.state import AgentSkill, Estimate, FleetSkill

__all__ = ["Predicted", "Shown", "latent_parts", "overall_of", "predicted_of"]

Shown = tuple[float, float, float, float]
"""(skill, sd, low, high) of an estimate as shown: on the scale, ``low <= skill <= high``."""

_FEW = 16
"""Up to this many task types, each is made showable and restricted to the scale one at a
time, in plain floats (``restricted.shown``, ``gauss.on_scale``); more, by
``restricted.shown_many`` and ``on_scale_many`` (the same formulas on arrays). The two
ways agree within 1e-9: each computes the normal distribution's tails its own way, and
their sums may add in another order."""
_MIN_SD = 1e-6
_MAX_SD = (HIGH - LOW) / 2.0
"""No distribution on the scale has a larger sd (half its mass at each end)."""


@dataclass(frozen=True, slots=True)
class Predicted:
    """What an agent's skill at each of the fleet's task types (in name order) is predicted
    from where it has no evidence there: the type's level (mean) and its variance plus
    ``type_spread`` squared; the agent's general ability is added (``live.prior_at``)."""

    names: tuple[str, ...]
    position: dict[str, int]
    mean: Floats
    var: Floats


_cached: tuple[FleetSkill, SkillRules, Predicted] | None = None


def predicted_of(fleet: FleetSkill, rules: SkillRules) -> Predicted:
    """The fleet's predictions (the last fleet and rules asked for are remembered: a board
    reads one fleet for every agent)."""
    global _cached  # noqa: PLW0603 - one entry, replaced whole (a race only recomputes it)
    found = _cached
    if found is not None and found[0] is fleet and found[1] is rules:
        return found[2]
    names = tuple(sorted(fleet.levels))
    levels = [fleet.level(t, rules) for t in names]
    made = Predicted(
        names=names,
        position={t: i for i, t in enumerate(names)},
        mean=np.array([m for m, _ in levels], dtype=np.float64),
        var=np.array([v for _, v in levels], dtype=np.float64) + fleet.type_spread(rules),
    )
    _cached = (fleet, rules, made)
    return made


def latent_parts(
    skill: AgentSkill, predicted: Predicted, rules: SkillRules, now: float | None = None
) -> tuple[Floats, Floats]:
    """The agent's latent mean and variance at every task type of the fleet's and its own
    (as ``live.prior_at`` reads each), each widened to ``now`` since its latest evidence
    when given (``drift_sd_per_day``; a predicted one has none)."""
    general = skill.general or Estimate(mean=0.0, var=rules.ability_sd**2)
    mean = predicted.mean + general.mean
    var = predicted.var + general.var
    extra = [t for t in skill.types if t not in predicted.position]
    if extra:
        mean = np.concatenate([mean, np.zeros(len(extra))])
        var = np.concatenate([var, np.zeros(len(extra))])
    position = {**predicted.position, **{t: len(predicted.names) + i for i, t in enumerate(extra)}}
    for task_type, estimate in skill.types.items():
        i = position[task_type]
        mean[i], var[i] = estimate.mean, estimate.var
        if now is not None and estimate.at is not None and now > estimate.at:
            var[i] += rules.drift_sd_per_day**2 * (now - estimate.at) / DAY_S
    return mean, var


def overall_of(mean: Floats, var: Floats, total_var: float, rules: SkillRules) -> Shown:
    """The overall of K >= 1 task types' latent means and variances and of the variance
    of their latent mean (``total_var``), each as of the moment read: the mean of each
    type's shown skill, and its sd and 95% interval (the module's rule). A ``total_var``
    that is not a positive finite number reads as the types' taken as independent."""
    count = len(mean)
    if count == 0:
        raise ValueError("an overall needs at least one task type")
    parts = _parts_plain if count <= _FEW else _parts_arrays
    return _combined(parts(mean, var, rules), total_var, rules)


class _Parts(NamedTuple):
    """What the overall is made of: the number of task types; sums over the types as
    shown (their skills, sds, and distances from the skill down to the interval's low end
    and up to its high end); and sums of their latent sds (made showable, before the
    restriction to the scale) and of those sds' squares."""

    types: int
    skills: float
    sds: float
    below: float
    above: float
    latent: float
    squares: float


def _parts_plain(mean: Floats, var: Floats, rules: SkillRules) -> _Parts:
    """``_Parts`` one task type at a time, in plain floats (numpy's overhead would be most
    of the time for a few types)."""
    means, variances = np.asarray(mean, np.float64).tolist(), np.asarray(var, np.float64).tolist()
    centred = [shown(m, v, rules) for m, v in zip(means, variances, strict=True)]
    made = [on_scale(c, u, rules.interval_z) for c, u in centred]
    return _Parts(
        types=len(made),
        skills=sum(skill for skill, _, _, _ in made),
        sds=sum(sd for _, sd, _, _ in made),
        below=sum(skill - low for skill, _, low, _ in made),
        above=sum(high - skill for skill, _, _, high in made),
        latent=sum(u for _, u in centred),
        squares=sum(u * u for _, u in centred),
    )


def _parts_arrays(mean: Floats, var: Floats, rules: SkillRules) -> _Parts:
    """``_Parts`` of all task types at once, on arrays."""
    centre, latent = shown_many(np.asarray(mean, np.float64), np.asarray(var, np.float64), rules)
    skills, sds, lows, highs = on_scale_many(centre, latent, rules.interval_z)
    with np.errstate(over="ignore"):  # inf past the largest float: the sd is bounded
        squares = float(np.sum(latent * latent))
    return _Parts(
        types=len(skills),
        skills=float(np.sum(skills)),
        sds=float(np.sum(sds)),
        below=float(np.sum(skills - lows)),
        above=float(np.sum(highs - skills)),
        latent=float(np.sum(latent)),
        squares=squares,
    )


def _combined(parts: _Parts, total_var: float, rules: SkillRules) -> Shown:
    """The overall of the task types' ``_Parts`` and of ``total_var`` (``overall_of``)."""
    count, spread = parts.types, parts.sds
    if not math.isfinite(total_var) or total_var <= 0.0:
        total_var = parts.squares / count**2
    sd = min(_MAX_SD, max(_MIN_SD, math.sqrt(total_var) * spread / parts.latent))
    skill = parts.skills / count
    kept = min(1.0, count * sd / spread)  # how much of the types' skew their mean keeps
    z = rules.interval_z
    below = z + kept * (parts.below / spread - z)
    above = z + kept * (parts.above / spread - z)
    return skill, sd, max(LOW, skill - sd * below), min(HIGH, skill + sd * above)
