"""Estimates as they can be shown: a stored centre and variance made showable whatever
they hold (``shown``), and many estimates restricted to the 0-10 scale at once
(``on_scale_many``: ``gauss.on_scale`` on arrays, the same formulas, so that an overall of
thousands of task types is a few array operations, not thousands of calls)."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from scipy.special import ndtr, ndtri

from agentladder.domain.skill.gauss import HIGH, LOW
from agentladder.domain.skill.rules import SkillRules

__all__ = ["MIN_VAR", "Floats", "on_scale_many", "shown", "shown_many"]

Floats = npt.NDArray[np.float64]

MIN_VAR = 1e-12
"""The smallest variance shown (an sd of 1e-6): one whose square underflows would show as 0."""

_ROOT_2PI = math.sqrt(2.0 * math.pi)


def shown(centre: float, var: float, rules: SkillRules) -> tuple[float, float]:
    """A centre and sd that can be shown, whatever the state holds: a variance that is
    not a positive finite number reads as a new agent's (nothing is known), and so does a
    centre that is not finite; a variance under ``MIN_VAR`` reads as ``MIN_VAR``. Never
    NaN or infinite, so every comparison of the board is decided and its JSON is valid."""
    prior = rules.level_sd**2 + rules.ability_sd**2
    if not math.isfinite(var) or var <= 0.0:
        var = prior
    if not math.isfinite(centre):
        centre, var = rules.prior_mean, max(var, prior)
    return centre, math.sqrt(max(var, MIN_VAR))


def shown_many(centre: Floats, var: Floats, rules: SkillRules) -> tuple[Floats, Floats]:
    """``shown`` of each centre and variance."""
    prior = rules.level_sd**2 + rules.ability_sd**2
    var = np.where(np.isfinite(var) & (var > 0.0), var, prior)
    lost = ~np.isfinite(centre)
    centre = np.where(lost, rules.prior_mean, centre)
    var = np.where(lost, np.maximum(var, prior), var)
    return centre, np.sqrt(np.maximum(var, MIN_VAR))


def on_scale_many(
    mean: Floats, sd: Floats, z: float
) -> tuple[Floats, Floats, Floats, Floats]:  # fmt: skip
    """``gauss.on_scale`` of each mean and sd (finite, sd > 0): the restricted mean, sd and
    central interval of ``z`` sd's coverage, ``0 <= low <= mean <= high <= 10``. Estimates
    far off the scale overflow on the way (to values the result does not use)."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        return _on_scale_many(mean, sd, z)


def _on_scale_many(
    mean: Floats, sd: Floats, z: float
) -> tuple[Floats, Floats, Floats, Floats]:  # fmt: skip
    flip = mean > (LOW + HIGH) / 2.0  # computed on the side whose tail is the far one
    centre = np.where(flip, (LOW + HIGH) - mean, mean)
    a, b = (LOW - centre) / sd, (HIGH - centre) / sd
    above = a > 0.0  # the whole scale in the upper tail: its probabilities, not 1 less them
    sign = np.where(above, -1.0, 1.0)  # the quantile of p is minus that of 1 - p
    cdf_a, cdf_b = ndtr(sign * a), ndtr(sign * b)
    mass = sign * (cdf_b - cdf_a)
    empty = mass < 1e-12  # all but nothing of it lies beyond the low end
    mass = np.where(empty, 1.0, mass)
    pa, pb = np.exp(-0.5 * a * a) / _ROOT_2PI, np.exp(-0.5 * b * b) / _ROOT_2PI
    shift = (pa - pb) / mass
    out_mean = centre + sd * shift
    out_var = sd * sd * np.maximum(1e-12, 1.0 + (a * pa - b * pb) / mass - shift * shift)
    tail = (1.0 - (2.0 * float(ndtr(z)) - 1.0)) / 2.0
    low = centre + sign * sd * ndtri(np.clip(cdf_a + sign * tail * mass, 1e-16, 1 - 1e-16))
    high = centre + sign * sd * ndtri(np.clip(cdf_b - sign * tail * mass, 1e-16, 1 - 1e-16))
    out_mean = np.where(empty, LOW, out_mean)
    out_sd = np.where(empty, np.minimum(sd, 1e-6), np.sqrt(out_var))
    low, high = np.where(empty, LOW, low), np.where(empty, LOW, high)
    out_mean, low, high = (
        np.where(flip, (LOW + HIGH) - out_mean, out_mean),
        np.where(flip, (LOW + HIGH) - high, low),
        np.where(flip, (LOW + HIGH) - low, high),
    )
    low = np.clip(low, LOW, HIGH)
    high = np.clip(high, LOW, HIGH)
    return np.clip(out_mean, low, high), out_sd, low, high
