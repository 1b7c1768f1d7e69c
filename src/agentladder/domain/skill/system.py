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

import numpy as np
import numpy.typing as npt
from scipy.linalg import lapack

from agentladder.domain.skill.pattern import Pattern, group_sums, matrix_values
from agentladder.domain.skill.terms import Held, Layout, Solution, Weighted

__all__ = ["anchors", "read_back", "solve_system"]

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


def anchors(lay: Layout, anchor: Floats) -> Floats:
    """One row per task type with scores: the anchor-weighted leniencies there."""
    rows = np.zeros((lay.types, lay.size))
    total = np.bincount(lay.st_type, weights=anchor, minlength=lay.types)
    share = np.where(
        total[lay.st_type] > 0.0, anchor / np.where(total > 0, total, 1.0)[lay.st_type], 0.0
    )
    np.add.at(rows, (lay.st_type, lay.b0 + lay.st_source), share)
    rows[lay.st_type, lay.v0 + np.arange(lay.source_types)] += share
    return rows[total > 0.0]


def _inverse(precision: Floats) -> Floats:
    """The inverse of a symmetric positive definite matrix, from its Cholesky factor
    (LAPACK's ``potrf`` then ``potri``: a third of the work of inverting the factor in
    general and multiplying it by its transpose, the same values to rounding);
    ``LinAlgError`` when the matrix is not positive definite, as ``numpy.linalg.cholesky``."""
    factor, info = lapack.dpotrf(precision, lower=1, clean=0)
    if info == 0:
        packed, info = lapack.dpotri(factor, lower=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"the precision matrix is not positive definite ({info})")
    inverse: Floats = np.tril(packed)
    inverse += np.tril(packed, -1).T  # potri fills the lower triangle only
    return inverse


def solve_system(lay: Layout, pattern: Pattern, w: Weighted) -> Solution:
    """The exact posterior under the anchors (a dense solve: the caller bounds the size)."""
    n = lay.size
    data, h = matrix_values(pattern, lay, w)
    precision = np.zeros((n, n))
    precision[pattern.slot_row, pattern.slot_col] = data
    cov = _inverse(precision)
    mean = cov @ h
    rows = anchors(lay, w.anchor)
    if len(rows):
        hc = cov @ rows.T
        inner = rows @ hc
        mean = mean - hc @ np.linalg.solve(inner, rows @ mean)
        cov = cov - hc @ np.linalg.solve(inner, hc.T)
        cov = (cov + cov.T) / 2.0
    return read_back(lay, pattern, w, mean, cov)


def read_back(lay: Layout, pattern: Pattern, w: Weighted, mean: Floats, cov: Floats) -> Solution:
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
        total, wy, ev = group_sums(pattern, lay, w)
        eg, ej = pattern.group_of, pattern.column_of
        a = total + 1.0 / w.difficulty
        offset = (wy - np.bincount(eg, weights=ev * mean[ej], minlength=lay.groups)) / a
        first, second = pattern.group_first, pattern.group_second
        # (cov b_g) at each entry of its group, and b_g' cov b_g
        cb = np.bincount(first, weights=cov[ej[first], ej[second]] * ev[second], minlength=len(ej))
        quad = np.bincount(eg, weights=ev * cb, minlength=lay.groups)
        offset_var = 1.0 / a + quad / (a * a)
        grouped = lay.group >= 0
        gk = np.where(grouped, lay.group, 0).astype(np.int64)  # keys below: int64
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
    return Solution(mean, np.diag(cov).copy(), cov, offset, offset_var,
                    Held(fitted, np.maximum(fitted_var, 0.0)))  # fmt: skip
