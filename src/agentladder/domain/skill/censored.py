"""The scores at 0 or 10 as "this or beyond" (one Tobit step a round, ``learn.py``): their
working values and the variance of that guess, kept for those scores only. Every other
observation's working value is its value as given and its extra variance 0, so a fit of a
million scores keeps no array of a million working values or extra variances beside the
table: a block's are made from the table's when asked for (``values``, ``extras``).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from agentladder.domain.skill.observations import Observations

__all__ = ["LOG_2PI", "Censored", "inverse_mills", "log_ndtr"]

Floats = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]
LOG_2PI = math.log(2.0 * math.pi)


def log_ndtr(z: Floats) -> Floats:
    """log Φ(z), stable in the left tail."""
    out = np.empty_like(z)
    low = z < -5.0
    hi = ~low
    out[hi] = np.log(0.5 * _erfc(-z[hi] / math.sqrt(2.0)))
    zl = z[low]
    # asymptotic series of the Mills ratio
    out[low] = -0.5 * zl * zl - np.log(-zl) - 0.5 * LOG_2PI + np.log1p(-1.0 / (zl * zl))
    return out


_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def inverse_mills(z: Floats) -> Floats:
    """φ(z) / (1 - Φ(z)): the mean of a standard normal beyond z."""
    return np.exp(-0.5 * z * z - 0.5 * LOG_2PI - log_ndtr(-z))


class Censored:
    """The scores at a bound (``at``: their observations, in order), each one's working
    value (``value``: as given until a Tobit step moves it) and that value's variance
    (``extra``)."""

    def __init__(self, obs: Observations) -> None:
        given = obs.value
        bound = (obs.source >= 0) & ((given <= 0.0) | (given >= 10.0))
        self.at = np.flatnonzero(bound)
        del bound
        self.given = obs.value
        self.value = given[self.at]
        self.extra = np.zeros(len(self.at))

    def _within(self, block: slice) -> tuple[slice, npt.NDArray[np.intp]]:
        """The bound scores of a block of observations: their entries here, their places
        in the block."""
        start, stop, _ = block.indices(len(self.given))
        low, high = np.searchsorted(self.at, (start, stop))
        return slice(int(low), int(high)), self.at[low:high] - start

    def values(self, block: slice) -> Floats:
        """The working values of a block of observations."""
        out = self.given[block].copy()
        entries, places = self._within(block)
        out[places] = self.value[entries]
        return out

    def extras(self, block: slice) -> Floats:
        """The working values' extra variances of a block of observations."""
        out = np.zeros(len(self.given[block]))
        entries, places = self._within(block)
        out[places] = self.extra[entries]
        return out

    def step(self, block: slice, expected: Floats, sd: Floats, censoring: Bools) -> None:
        """One Tobit step on a block's scores at a bound: those of ``censoring`` (scored, of
        a source not two-valued) get their expected value beyond the bound (the fit expects
        ``expected`` with ``sd``) and that guess's variance; the others their value as
        given, and none."""
        entries, places = self._within(block)
        given = self.given[block][places]
        value = given.copy()
        extra = np.zeros(len(given))
        expected, sd, censoring = expected[places], sd[places], censoring[places]
        for bound, sign in ((10.0, 1.0), (0.0, -1.0)):
            at = censoring & ((given >= 10.0) if sign > 0 else (given <= 0.0))
            if not at.any():
                continue
            z = sign * (bound - expected[at]) / sd[at]
            ratio = inverse_mills(z)
            guess = expected[at] + sign * sd[at] * ratio
            value[at] = np.maximum(bound, guess) if sign > 0 else np.minimum(bound, guess)
            extra[at] = sd[at] ** 2 * np.maximum(0.0, 1.0 - ratio * (ratio - z))
        self.value[entries] = value
        self.extra[entries] = extra
