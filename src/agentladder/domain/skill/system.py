"""The fit's linear-Gaussian system, given each observation's weight: built, solved under
the scale's anchors, and read back (fitted values and their uncertainty).

Unknowns, in this order: each observed (agent, task type)'s skill ``s``; each agent's
general ability ``q``; each task type's level ``L``; each source's leniency ``b``; each
(source, task type)'s leniency ``v`` beside it. A score is

    y = s[agent, type] + b[source] + v[source, type] + o[deliberation] + noise

with ``s ~ N(L[type] + q[agent], type_spread²)``, ``q ~ N(0, ability_sd²)``,
``L ~ N(prior_mean, level_sd²)``, ``b ~ N(0, leniency²)``, ``v ~ N(0, type_leniency_sd²)``
and ``o ~ N(0, difficulty²)``. A binary outcome enters by its working value and weight
(one Fisher-scoring step of its probit). Each deliberation's offset is integrated out
(its Schur complement), so the system grows with the fleet, not with the evidence.

The scale: at each task type, the sources' leniencies, each weighed by what its scores
there say (their total weight in the fit: how many, how precise, how honest), average to
exactly zero. The board's scale is thus that of the evidence-weighted average score at the
task type; with one judge, that judge's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["Layout", "Solution", "Weighted", "solve_system"]

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Layout:
    """Where each kind of unknown starts, and each observation's unknowns: ``cols`` (k, 3)
    holds its skill, leniency and type leniency columns (-1 where it has none)."""

    pairs: int
    agents: int
    types: int
    sources: int
    source_types: int
    pair_agent: Ints
    pair_type: Ints
    st_source: Ints
    st_type: Ints
    cols: Ints
    group: Ints
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
    level: float
    level_mean: float
    leniency: float
    type_leniency: float
    difficulty: float


@dataclass(frozen=True)
class Solution:
    """The posterior of the unknowns (mean, variance, and the whole covariance when the
    system was solved exactly) and of each deliberation's offset (mean, variance), each
    observation's fitted value and its variance."""

    mean: Floats
    var: Floats
    cov: Floats | None
    offset: Floats
    offset_var: Floats
    fitted: Floats
    fitted_var: Floats

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


def _entries(lay: Layout, weight: Floats) -> tuple[Ints, Ints, Floats]:
    """Each (observation, unknown) with its weight: the rows of the design."""
    k = np.repeat(np.arange(len(weight)), 3)
    cols = lay.cols.ravel()
    keep = cols >= 0
    return k[keep], cols[keep], np.repeat(weight, 3)[keep]


def _group_sums(
    lay: Layout, weight: Floats, value: Floats
) -> tuple[Floats, Floats, Ints, Ints, Floats]:
    """Per deliberation: the weights' sum (plus the offset's prior precision added by the
    caller) and the weighted values' sum; and its design vector as (group, unknown,
    value) entries sorted by group."""
    grouped = lay.group >= 0
    g = lay.group[grouped]
    total = np.bincount(g, weights=weight[grouped], minlength=lay.groups)
    wy = np.bincount(g, weights=(weight * value)[grouped], minlength=lay.groups)
    k, col, w = _entries(lay, weight)
    in_group = lay.group[k] >= 0
    gk = lay.group[k][in_group]
    key = gk * lay.size + col[in_group]
    uniq, inverse = np.unique(key, return_inverse=True)
    vals = np.bincount(inverse, weights=w[in_group], minlength=len(uniq))
    return (total.astype(np.float64), wy.astype(np.float64), (uniq // lay.size).astype(np.int64),
            (uniq % lay.size).astype(np.int64), vals.astype(np.float64))  # fmt: skip


def _pairs_within(group: Ints) -> tuple[Ints, Ints]:
    """Every ordered pair (i, j) of entries of one group (entries sorted by group)."""
    counts = np.bincount(group)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    m = counts[group]
    first = np.repeat(np.arange(len(group)), m)
    offsets = np.arange(len(first)) - np.repeat(np.cumsum(m) - m, m)
    second = starts[group[first]] + offsets
    return first, second


def _precision(lay: Layout, w: Weighted) -> tuple[Floats, Floats]:
    """The precision matrix and precision-times-mean of the unknowns (offsets integrated
    out)."""
    n = lay.size
    flat = np.zeros(n * n)
    h = np.zeros(n)
    k, col, weight = _entries(lay, w.weight)
    # the design's own products, observation by observation
    first, second = _pairs_within(k)
    flat += np.bincount(col[first] * n + col[second], weights=weight[first], minlength=n * n)
    h += np.bincount(col, weights=weight * w.value[k], minlength=n)
    # the pooling of each skill around its agent's ability and its type's level
    p = np.arange(lay.pairs)
    trio = np.stack([p, lay.q0 + lay.pair_agent, lay.l0 + lay.pair_type], axis=1)
    sign = np.array([1.0, -1.0, -1.0])
    rows = np.repeat(trio, 3, axis=1).ravel()
    cols = np.tile(trio, (1, 3)).ravel()
    vals = np.tile(np.outer(sign, sign).ravel(), lay.pairs) / w.type_spread
    flat += np.bincount(rows * n + cols, weights=vals, minlength=n * n)
    precision = flat.reshape(n, n)
    diag = np.zeros(n)
    diag[lay.q0 : lay.l0] = 1.0 / w.ability
    diag[lay.l0 : lay.b0] = 1.0 / w.level
    diag[lay.b0 : lay.v0] = 1.0 / w.leniency
    diag[lay.v0 :] = 1.0 / w.type_leniency
    precision[np.diag_indices(n)] += diag
    h[lay.l0 : lay.b0] += w.level_mean / w.level
    if lay.groups:
        total, wy, eg, ej, ev = _group_sums(lay, w.weight, w.value)
        a = total + 1.0 / w.difficulty
        i, j = _pairs_within(eg)
        flat = precision.ravel()
        flat -= np.bincount(ej[i] * n + ej[j], weights=ev[i] * ev[j] / a[eg[i]], minlength=n * n)
        h -= np.bincount(ej, weights=ev * wy[eg] / a[eg], minlength=n)
    return precision, h


def _anchors(lay: Layout, anchor: Floats) -> Floats:
    """One row per task type with scores: the anchor-weighted leniencies there."""
    rows = np.zeros((lay.types, lay.size))
    total = np.bincount(lay.st_type, weights=anchor, minlength=lay.types)
    share = np.where(
        total[lay.st_type] > 0.0, anchor / np.where(total > 0, total, 1.0)[lay.st_type], 0.0
    )
    np.add.at(rows, (lay.st_type, lay.b0 + lay.st_source), share)
    rows[lay.st_type, lay.v0 + np.arange(lay.source_types)] += share
    return rows[total > 0.0]


def solve_system(lay: Layout, w: Weighted) -> Solution:
    """The exact posterior under the anchors (a dense solve: the caller bounds the size)."""
    precision, h = _precision(lay, w)
    factor = np.linalg.cholesky(precision)
    inverse = np.linalg.inv(factor)
    cov = inverse.T @ inverse
    mean = cov @ h
    anchors = _anchors(lay, w.anchor)
    if len(anchors):
        hc = cov @ anchors.T
        inner = anchors @ hc
        mean = mean - hc @ np.linalg.solve(inner, anchors @ mean)
        cov = cov - hc @ np.linalg.solve(inner, hc.T)
        cov = (cov + cov.T) / 2.0
    return _read_back(lay, w, mean, cov)


def _read_back(lay: Layout, w: Weighted, mean: Floats, cov: Floats) -> Solution:
    """Offsets, fitted values and their variances from the unknowns' posterior."""
    cols = lay.cols
    has = cols >= 0
    safe = np.where(has, cols, 0)
    fitted = np.where(has, mean[safe], 0.0).sum(axis=1)
    fitted_var = np.zeros(len(fitted))
    for row in range(3):
        for col in range(3):
            both = has[:, row] & has[:, col]
            fitted_var += np.where(both, cov[safe[:, row], safe[:, col]], 0.0)
    offset = np.zeros(lay.groups)
    offset_var = np.zeros(lay.groups)
    if lay.groups:
        total, wy, eg, ej, ev = _group_sums(lay, w.weight, w.value)
        a = total + 1.0 / w.difficulty
        offset = (wy - np.bincount(eg, weights=ev * mean[ej], minlength=lay.groups)) / a
        first, second = _pairs_within(eg)
        # (cov b_g) at each entry of its group, and b_g' cov b_g
        cb = np.bincount(first, weights=cov[ej[first], ej[second]] * ev[second], minlength=len(ej))
        quad = np.bincount(eg, weights=ev * cb, minlength=lay.groups)
        offset_var = 1.0 / a + quad / (a * a)
        grouped = lay.group >= 0
        gk = np.where(grouped, lay.group, 0)
        # x_k' cov b_g / a: the entry of (cov b_g) at each of the observation's unknowns
        key_sorted = eg * lay.size + ej
        cross = np.zeros(len(fitted))
        for i_col in range(3):
            present = grouped & has[:, i_col]
            key = gk * lay.size + safe[:, i_col]
            at = np.searchsorted(key_sorted, key)
            at = np.minimum(at, len(key_sorted) - 1)
            found = present & (key_sorted[at] == key)
            cross += np.where(found, cb[at], 0.0)
        fitted = fitted + np.where(grouped, offset[gk], 0.0)
        fitted_var = fitted_var + np.where(grouped, offset_var[gk] - 2.0 * cross / a[gk], 0.0)
    return Solution(mean, np.diag(cov).copy(), cov, offset, offset_var, fitted,
                    np.maximum(fitted_var, 0.0))  # fmt: skip
