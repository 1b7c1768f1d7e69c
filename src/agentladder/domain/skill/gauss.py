"""Scalar Gaussian helpers of the evidence model: a probit outcome's update, a score at the
scale's end, and an estimate restricted to the 0-10 scale for display."""

from __future__ import annotations

import math
from statistics import NormalDist

__all__ = ["censored", "on_scale", "probit_update"]

_STANDARD = NormalDist()
LOW, HIGH = 0.0, 10.0


def _mills(z: float) -> float:
    """φ(z) / Φ(z), stable in the left tail."""
    if z < -30.0:
        return -z
    cdf = 0.5 * math.erfc(-z / math.sqrt(2.0))
    return math.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi) / cdf


def probit_update(
    mean: float, var: float, threshold: float, passed: bool, sd: float
) -> tuple[float, float]:
    """P(pass) = Φ((skill - threshold) / sd): the Gaussian closest to the posterior."""
    sign = 1.0 if passed else -1.0
    total = math.sqrt(var + sd * sd)
    z = sign * (mean - threshold) / total
    ratio = _mills(z)
    new_mean = mean + sign * var * ratio / total
    new_var = var * max(1e-9, 1.0 - var / total**2 * ratio * (ratio + z))
    return new_mean, new_var


def censored(score: float, expected: float, spread: float) -> tuple[float, float]:
    """A score at 0 or 10 says "this or beyond": what the prior expects of the uncensored
    score given that (the truncated normal's mean), and the extra variance of that guess
    (one step of the Tobit model's EM). Other scores are returned as they are."""
    if LOW < score < HIGH:
        return score, 0.0
    sd = math.sqrt(spread)
    sign = 1.0 if score >= HIGH else -1.0
    z = sign * (score - expected) / sd
    ratio = _mills(-z)
    value = expected + sign * sd * ratio
    shrink = max(0.0, 1.0 - ratio * (ratio - z))
    value = max(score, value) if sign > 0 else min(score, value)
    return value, spread * shrink


def _cdf(x: float) -> float:
    """Φ(x), exact in the tails (``NormalDist.cdf`` takes 1 + erf: 7 sd out it keeps four
    digits)."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _quantile(p: float) -> float:
    return _STANDARD.inv_cdf(min(1 - 1e-16, max(1e-16, p)))


def on_scale(mean: float, sd: float, z: float) -> tuple[float, float, float, float]:
    """The estimate restricted to the scale 0-10 (skill cannot be outside it): its mean,
    sd and central interval of ``z`` sd's coverage, always ``0 <= low <= mean <= high <= 10``."""
    if not (math.isfinite(mean) and math.isfinite(sd)) or sd <= 0.0:
        raise ValueError(f"not an estimate: mean {mean}, sd {sd}")
    flip = mean > (LOW + HIGH) / 2.0  # compute on the side whose tail is the far one
    centre = (LOW + HIGH) - mean if flip else mean
    a, b = (LOW - centre) / sd, (HIGH - centre) / sd
    above = a > 0.0  # the whole scale in the upper tail: its probabilities, not 1 less them
    cdf_a, cdf_b = (_cdf(-a), _cdf(-b)) if above else (_cdf(a), _cdf(b))
    mass = cdf_a - cdf_b if above else cdf_b - cdf_a
    if mass < 1e-12:  # all but nothing of it lies beyond the low end
        out_mean, out_sd, low, high = LOW, min(sd, 1e-6), LOW, LOW
    else:
        pa, pb = _STANDARD.pdf(a), _STANDARD.pdf(b)
        shift = (pa - pb) / mass
        out_mean = centre + sd * shift
        out_var = sd * sd * max(1e-12, 1.0 + (a * pa - b * pb) / mass - shift * shift)
        out_sd = math.sqrt(out_var)
        tail = (1.0 - (2.0 * _cdf(z) - 1.0)) / 2.0
        sign = -1.0 if above else 1.0  # the quantile of p is minus that of 1 - p
        low = centre + sign * sd * _quantile(cdf_a + sign * tail * mass)
        high = centre + sign * sd * _quantile(cdf_b - sign * tail * mass)
    if flip:
        out_mean, low, high = (LOW + HIGH) - out_mean, (LOW + HIGH) - high, (LOW + HIGH) - low
    low = min(max(LOW, low), HIGH)
    high = min(max(LOW, high), HIGH)
    out_mean = min(max(low, out_mean), high)
    return out_mean, out_sd, low, high
