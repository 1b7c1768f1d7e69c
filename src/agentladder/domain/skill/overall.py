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
from collections.abc import Sequence

from agentladder.domain.skill.gauss import HIGH, LOW, on_scale
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.state import Estimate

__all__ = ["Shown", "overall_of", "shown"]

Shown = tuple[float, float, float, float]
"""(skill, sd, low, high) of an estimate as shown: on the scale, ``low <= skill <= high``."""

_MIN_SD = 1e-6
_MAX_SD = (HIGH - LOW) / 2.0
"""No distribution on the scale has a larger sd (half its mass at each end)."""


def shown(centre: float, var: float, rules: SkillRules) -> tuple[float, float]:
    """A centre and sd that can be shown, whatever the state holds: a variance that is
    not a positive finite number reads as a new agent's (nothing is known), and so does a
    centre that is not finite; a variance under 1e-12 reads as 1e-12 (an sd of 1e-6: one
    whose square underflows would show as 0). Never NaN or infinite, so every comparison
    of the board is decided and its JSON is valid."""
    prior = rules.level_sd**2 + rules.ability_sd**2
    if not math.isfinite(var) or var <= 0.0:
        var = prior
    if not math.isfinite(centre):
        centre, var = rules.prior_mean, max(var, prior)
    return centre, math.sqrt(max(var, _MIN_SD * _MIN_SD))


def overall_of(
    estimates: Sequence[Estimate], total_var: float, rules: SkillRules,
    variances: Sequence[float] | None = None,
) -> Shown:  # fmt: skip
    """The overall of the agent's estimates at K >= 1 task types and of the variance of
    their latent mean (``total_var``), each as of the moment read (``variances``: the
    types' variances then, default their stored ones): the mean of each type's shown
    skill, and its sd and 95% interval (the module's rule). A ``total_var`` that is not a
    positive finite number reads as the types' taken as independent."""
    if not estimates:
        raise ValueError("an overall needs at least one task type")
    count = len(estimates)
    now = [e.var for e in estimates] if variances is None else variances
    latent = [shown(e.mean, v, rules) for e, v in zip(estimates, now, strict=True)]
    parts = [on_scale(mean, sd, rules.interval_z) for mean, sd in latent]
    if not math.isfinite(total_var) or total_var <= 0.0:
        # a plain sum: variances near the largest float overflow to inf, not an error
        total_var = sum(sd * sd for _, sd in latent) / count**2
    narrowed = math.fsum(p[1] for p in parts) / math.fsum(sd for _, sd in latent)
    sd = min(_MAX_SD, max(_MIN_SD, math.sqrt(total_var) * narrowed))
    skill = math.fsum(p[0] for p in parts) / count
    spread = math.fsum(p[1] for p in parts)
    kept = min(1.0, count * sd / spread)  # how much of the types' skew their mean keeps
    z = rules.interval_z
    below = z + kept * (math.fsum(p[0] - p[2] for p in parts) / spread - z)
    above = z + kept * (math.fsum(p[3] - p[0] for p in parts) / spread - z)
    return skill, sd, max(LOW, skill - sd * below), min(HIGH, skill + sd * above)
