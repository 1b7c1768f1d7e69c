"""The terms of the fit's system: where each unknown is (``Layout``), what one round
weighs (``Weighted``), and what a solve gives back (``Solution``, its fitted values
``Fitted``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from agentladder.domain.skill.observations import Index

__all__ = ["Fitted", "Held", "Layout", "Solution", "Weighted", "Where"]

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
Where = npt.NDArray[np.integer[Any]] | slice
"""Some observations: a block of them (a slice) or their indices."""


@dataclass(frozen=True)
class Layout:
    """Where each kind of unknown starts, and each observation's unknowns: ``cols`` (k, 3)
    holds its skill, leniency and type leniency columns (-1 where it has none), in int32."""

    pairs: int
    agents: int
    types: int
    sources: int
    source_types: int
    pair_agent: Ints
    pair_type: Ints
    st_source: Ints
    st_type: Ints
    cols: Index
    group: Index
    groups: int

    @property
    def q0(self) -> int:
        return self.pairs

    @property
    def l0(self) -> int:
        return self.pairs + self.agents

    @property
    def b0(self) -> int:
        return self.l0 + self.types

    @property
    def v0(self) -> int:
        return self.b0 + self.sources

    @property
    def size(self) -> int:
        return self.v0 + self.source_types


@dataclass(frozen=True)
class Weighted:
    """One round's inputs: each observation's weight and (working) value, each source's
    weight in the scale's anchor, and the priors' spreads (variances)."""

    weight: Floats
    value: Floats
    anchor: Floats
    type_spread: float
    ability: float
    level: Floats  # per task type
    level_mean: float
    leniency: float
    type_leniency: float
    difficulty: float


class Fitted(Protocol):
    """Each observation's fitted value and its variance, given for some observations at a
    time: held for all of them (``Held``), or made from the unknowns when asked for (the
    large solver's: ``large.py``), so that a fit of a million observations does not hold
    two more arrays of them through a round."""

    def at(self, where: Where) -> tuple[Floats, Floats]:
        """The fitted values and their variances of the observations at ``where``."""
        ...


@dataclass(frozen=True)
class Held:
    """Fitted values and variances held for every observation (the exact solver's)."""

    fitted: Floats
    fitted_var: Floats

    def at(self, where: Where) -> tuple[Floats, Floats]:
        """The held values at ``where``."""
        return self.fitted[where], self.fitted_var[where]


@dataclass(frozen=True)
class Solution:
    """The posterior of the unknowns (mean, variance, and the whole covariance when the
    system was solved exactly) and of each deliberation's offset (mean, variance); each
    observation's fitted value and its variance (``fitted``)."""

    mean: Floats
    var: Floats
    cov: Floats | None
    offset: Floats
    offset_var: Floats
    fitted: Fitted

    def cross(self, i: Ints, j: Ints) -> Floats:
        """The covariances of unknowns ``i`` and ``j`` (pairwise; 0 where not exact)."""
        if self.cov is None:
            return np.where(i == j, self.var[i], 0.0)
        return self.cov[i, j]

    def quadratic_at(self, index: Ints, weight: Floats) -> float:
        """The variance of the combination of unknowns ``index`` with ``weight``."""
        if self.cov is None:
            return float(np.sum(weight * weight * self.var[index]))
        return float(weight @ self.cov[np.ix_(index, index)] @ weight)

    def quadratic(self, combo: Floats) -> float:
        """The variance of a linear combination of the unknowns (as if independent where
        the covariance is not exact)."""
        if self.cov is None:
            return float(np.sum(combo * combo * self.var))
        return float(combo @ self.cov @ combo)
