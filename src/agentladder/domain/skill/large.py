"""The fit's system for a large fleet (more unknowns than ``exact_limit``): the same
sparse system as ``system.py`` (offsets integrated out), its means by conjugate gradients
(Jacobi-preconditioned, from the previous round's means) with each task type's anchor
imposed exactly (one more solve per task type), its variances by a first-order
approximation: each skill's conditional variance, plus the variances of what its estimate
leans on (its sources' leniencies, its deliberations' offsets, its pooling prior), weighed
by how much it leans on each, plus the variance of a shift shared by every skill of its
task type. Covariances are not kept: the variance of a combination (overall) is taken as
if its parts were independent (``docs/skill.md``, "Large fleets").
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import scipy.sparse.linalg as sparse_linalg
from scipy import sparse

from agentladder.domain.skill.pattern import Pattern, group_sums, matrix_values
from agentladder.domain.skill.system import anchors
from agentladder.domain.skill.terms import Layout, Solution, Weighted

__all__ = ["solve_large"]

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
_RTOL = 1e-9
_MAX_STEPS = 5000


def _sums(index: Ints, weights: Floats, size: int) -> Floats:
    return np.bincount(index, weights=weights, minlength=size).astype(np.float64)


class _Index:
    """Each observation's unknowns, without the -1s of absent ones."""

    def __init__(self, lay: Layout) -> None:
        self.p = lay.cols[:, 0]
        self.scored = lay.cols[:, 1] >= 0
        self.b = np.where(self.scored, lay.cols[:, 1], 0)
        self.v = np.where(self.scored, lay.cols[:, 2], 0)
        self.grouped = lay.group >= 0
        self.g = np.where(self.grouped, lay.group, 0)


def _solve(matrix: sparse.csr_matrix, rhs: Floats, start: Floats, scale: Floats) -> Floats:
    """``matrix⁻¹ rhs`` by preconditioned conjugate gradients."""
    found, _ = sparse_linalg.cg(
        matrix, rhs, x0=start, rtol=_RTOL, maxiter=_MAX_STEPS, M=sparse.diags(scale)
    )
    return np.asarray(found, dtype=np.float64)


def _variances(lay: Layout, w: Weighted, ix: _Index) -> tuple[Floats, Floats]:
    """Approximate marginal variances of the unknowns and of the offsets."""
    weight = w.weight
    sc, gr = ix.scored, ix.grouped
    var = np.zeros(lay.size)
    a = _sums(ix.g[gr], weight[gr], lay.groups) + 1.0 / w.difficulty
    offset_var = 1.0 / a if lay.groups else np.zeros(0)
    b_den = _sums(ix.b[sc] - lay.b0, weight[sc], lay.sources) + 1.0 / w.leniency
    v_den = _sums(ix.v[sc] - lay.v0, weight[sc], lay.source_types) + 1.0 / w.type_leniency
    var[lay.b0 : lay.v0] = 1.0 / b_den
    var[lay.v0 :] = 1.0 / v_den
    inv = 1.0 / w.type_spread
    count_a = np.bincount(lay.pair_agent, minlength=lay.agents)
    count_t = np.bincount(lay.pair_type, minlength=lay.types)
    var[lay.q0 : lay.l0] = 1.0 / (count_a * inv + 1.0 / w.ability)
    var[lay.l0 : lay.b0] = 1.0 / (count_t * inv + 1.0 / w.level)
    d = _sums(ix.p, weight, lay.pairs) + inv
    own = 1.0 / d
    # what each skill leans on: its scores' leniencies and offsets, its pooling prior
    lean = np.where(sc, var[ix.b] + var[ix.v], 0.0)
    if lay.groups:
        lean = lean + np.where(gr, offset_var[ix.g], 0.0)
    key = ix.p * max(lay.size, 1) + np.where(sc, ix.b, -1) + 1
    uniq, inverse = np.unique(key, return_inverse=True)
    grouped_w = _sums(inverse, weight, len(uniq))
    per_pair_lean = _sums(inverse, weight * lean, len(uniq)) / np.maximum(grouped_w, 1e-300)
    pair_of = (uniq // max(lay.size, 1)).astype(np.int64)
    leaned = _sums(pair_of, grouped_w * grouped_w * per_pair_lean, lay.pairs) / (d * d)
    prior = (inv / d) ** 2 * (var[lay.q0 + lay.pair_agent] + var[lay.l0 + lay.pair_type])
    var[: lay.pairs] = own + leaned + prior + _common(lay, w, ix, a)[lay.pair_type]
    return var, offset_var


def _common(lay: Layout, w: Weighted, ix: _Index, a: Floats) -> Floats:
    """Per task type, the variance of a shift shared by every skill there: what no single
    skill's conditional variance shows. Scores outside deliberations (on the anchored
    scale) and binary outcomes pin it; a deliberation's scores pin it only as far as its
    offset's prior does (its offset could take any shared shift); the level's prior too."""
    type_of = lay.pair_type[ix.p]
    alone = ~ix.grouped
    info = _sums(type_of[alone], w.weight[alone], lay.types) + 1.0 / w.level
    if lay.groups:
        group_type = np.zeros(lay.groups, dtype=np.int64)
        group_type[ix.g[ix.grouped]] = type_of[ix.grouped]
        info = info + _sums(group_type, 1.0 / (w.difficulty + 1.0 / a), lay.types)
    return 1.0 / info


def solve_large(lay: Layout, pattern: Pattern, w: Weighted, start: Floats) -> Solution:
    """Means by conjugate gradients from ``start`` under the anchors; approximate
    variances."""
    n = lay.size
    data, h = matrix_values(pattern, lay, w)
    matrix = sparse.csr_matrix((data, pattern.indices, pattern.indptr), shape=(n, n))
    scale = 1.0 / matrix.diagonal()
    theta = _solve(matrix, h, start, scale)
    constraints = anchors(lay, w.anchor)
    if len(constraints):
        across = np.stack([_solve(matrix, c, np.zeros(n), scale) for c in constraints], axis=1)
        theta = theta - across @ np.linalg.solve(constraints @ across, constraints @ theta)
    ix = _Index(lay)
    offset = np.zeros(lay.groups)
    if lay.groups:
        total, wy, ev = group_sums(pattern, lay, w)
        eg, ej = pattern.group_of, pattern.column_of
        a = total + 1.0 / w.difficulty
        offset = (wy - np.bincount(eg, weights=ev * theta[ej], minlength=lay.groups)) / a
    var, offset_var = _variances(lay, w, ix)
    fitted = theta[ix.p] + np.where(ix.scored, theta[ix.b] + theta[ix.v], 0.0)
    fitted_var = var[ix.p] + np.where(ix.scored, var[ix.b] + var[ix.v], 0.0)
    if lay.groups:
        fitted = fitted + np.where(ix.grouped, offset[ix.g], 0.0)
        fitted_var = fitted_var + np.where(ix.grouped, offset_var[ix.g], 0.0)
    return Solution(theta, var, None, offset, offset_var, fitted, fitted_var)
