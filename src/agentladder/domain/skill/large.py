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

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse.linalg as sparse_linalg
from scipy import sparse

from agentladder.domain.skill.blocks import RunningSums, slices
from agentladder.domain.skill.pattern import Pattern, group_sums, prior_diagonal, right_side
from agentladder.domain.skill.system import anchors
from agentladder.domain.skill.terms import Layout, Solution, Weighted, Where

__all__ = ["solve_large"]

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
_RTOL = 1e-9
_MAX_STEPS = 5000


def _sums(index: npt.NDArray[np.integer[Any]], weights: Floats, size: int) -> Floats:
    return np.bincount(index, weights=weights, minlength=size).astype(np.float64)


class _Part:
    """One block's observations' unknowns (``blocks.py``): each one's skill, and its
    leniencies and its deliberation's offset where it has them (0 where not)."""

    def __init__(self, lay: Layout, at: Where) -> None:
        cols = lay.cols[at]
        self.p = cols[:, 0]
        self.scored = cols[:, 1] >= 0
        self.b = np.where(self.scored, cols[:, 1], 0)
        self.v = np.where(self.scored, cols[:, 2], 0)
        group = lay.group[at]
        self.grouped = group >= 0
        self.g = np.where(self.grouped, group, 0)


def _parts(lay: Layout) -> Iterator[tuple[slice, _Part]]:
    """The observations' blocks, in order, each's unknowns made when it is reached."""
    for at in slices(len(lay.cols)):
        yield at, _Part(lay, at)


@dataclass(frozen=True)
class _Made:
    """The fitted values and their variances made from the unknowns' means and variances
    when asked for (``terms.Fitted``): as if independent, as the variances are taken."""

    lay: Layout
    mean: Floats
    var: Floats
    offset: Floats
    offset_var: Floats

    def at(self, where: Where) -> tuple[Floats, Floats]:
        """Those of the observations at ``where``."""
        theta, var, ix = self.mean, self.var, _Part(self.lay, where)
        fitted = theta[ix.p] + np.where(ix.scored, theta[ix.b] + theta[ix.v], 0.0)
        fitted_var = var[ix.p] + np.where(ix.scored, var[ix.b] + var[ix.v], 0.0)
        if self.lay.groups:
            fitted = fitted + np.where(ix.grouped, self.offset[ix.g], 0.0)
            fitted_var = fitted_var + np.where(ix.grouped, self.offset_var[ix.g], 0.0)
        return fitted, fitted_var


class _Counts:
    """The weights' sums the variances take, made block by block (``blocks.py``: the same
    sums as one pass): per deliberation, per source, per (source, task type), per skill,
    per task type of the observations outside deliberations, and each deliberation's
    task type."""

    def __init__(self, lay: Layout, w: Weighted) -> None:
        groups = RunningSums(lay.groups)
        b_sums, v_sums = RunningSums(lay.sources), RunningSums(lay.source_types)
        pairs, alone = RunningSums(lay.pairs), RunningSums(lay.types)
        self.group_type = np.zeros(lay.groups, dtype=np.int64)
        for at, ix in _parts(lay):
            sc, gr, weight = ix.scored, ix.grouped, w.weight[at]
            groups.add(ix.g[gr], weight[gr])
            b_sums.add(ix.b[sc] - lay.b0, weight[sc])
            v_sums.add(ix.v[sc] - lay.v0, weight[sc])
            pairs.add(ix.p, weight)
            type_of = lay.pair_type[ix.p]
            alone.add(type_of[~gr], weight[~gr])
            if lay.groups:
                self.group_type[ix.g[gr]] = type_of[gr]
        self.groups, self.b, self.v = groups.total, b_sums.total, v_sums.total
        self.pairs, self.alone = pairs.total, alone.total


def _variances(lay: Layout, w: Weighted, pattern: Pattern) -> tuple[Floats, Floats]:
    """Approximate marginal variances of the unknowns and of the offsets."""
    counts = _Counts(lay, w)
    var = np.zeros(lay.size)
    a = counts.groups + 1.0 / w.difficulty
    offset_var = 1.0 / a if lay.groups else np.zeros(0)
    var[lay.b0 : lay.v0] = 1.0 / (counts.b + 1.0 / w.leniency)
    var[lay.v0 :] = 1.0 / (counts.v + 1.0 / w.type_leniency)
    inv = 1.0 / w.type_spread
    count_a = np.bincount(lay.pair_agent, minlength=lay.agents)
    count_t = np.bincount(lay.pair_type, minlength=lay.types)
    var[lay.q0 : lay.l0] = 1.0 / (count_a * inv + 1.0 / w.ability)
    var[lay.l0 : lay.b0] = 1.0 / (count_t * inv + 1.0 / w.level)
    d = counts.pairs + inv
    own = 1.0 / d
    # what each skill leans on: its scores' leniencies and offsets, its pooling prior
    inverse, pair_of = pattern.lean_of, pattern.lean_pair
    grouped_w, lean_sums = RunningSums(len(pair_of)), RunningSums(len(pair_of))
    for at, ix in _parts(lay):
        lean = np.where(ix.scored, var[ix.b] + var[ix.v], 0.0)
        if lay.groups:
            lean = lean + np.where(ix.grouped, offset_var[ix.g], 0.0)
        weight = w.weight[at]
        grouped_w.add(inverse[at], weight)
        lean_sums.add(inverse[at], weight * lean)
    per_pair_lean = lean_sums.total / np.maximum(grouped_w.total, 1e-300)
    leaned = _sums(pair_of, grouped_w.total * grouped_w.total * per_pair_lean, lay.pairs) / (d * d)
    prior = (inv / d) ** 2 * (var[lay.q0 + lay.pair_agent] + var[lay.l0 + lay.pair_type])
    var[: lay.pairs] = own + leaned + prior + _common(lay, w, counts, a)[lay.pair_type]
    return var, offset_var


def _common(lay: Layout, w: Weighted, counts: _Counts, a: Floats) -> Floats:
    """Per task type, the variance of a shift shared by every skill there: what no single
    skill's conditional variance shows. Scores outside deliberations (on the anchored
    scale) and binary outcomes pin it; a deliberation's scores pin it only as far as its
    offset's prior does (its offset could take any shared shift); the level's prior too."""
    info = counts.alone + 1.0 / w.level
    if lay.groups:
        info = info + _sums(counts.group_type, 1.0 / (w.difficulty + 1.0 / a), lay.types)
    return 1.0 / info


class _Operator:
    """The precision matrix as products, never formed: the design's part ``Xᵀ W X`` (one
    row per column combination), the pooling's, the priors' diagonal, less the offsets'
    part ``Bᵀ A⁻¹ B`` (one row per deliberation)."""

    def __init__(self, lay: Layout, pattern: Pattern, w: Weighted,
                 groups: tuple[Floats, Floats, Floats] | None) -> None:  # fmt: skip
        n = lay.size
        combos = RunningSums(len(pattern.combo_cols))
        for at in slices(len(pattern.combo)):
            combos.add(pattern.combo[at], w.weight[at])
        self.combo_weight = combos.total
        ones = np.ones(len(pattern.entry_col))
        self.design = sparse.csr_matrix(
            (ones, (pattern.entry_combo, pattern.entry_col)), shape=(combos.size, n)
        )
        pool = sparse.csr_matrix(
            (pattern.pool_sign / w.type_spread, (pattern.pool_rows, pattern.pool_cols)),
            shape=(n, n),
        )
        self.pool = pool
        self.prior = prior_diagonal(lay, w)
        diagonal = _sums(pattern.entry_col, self.combo_weight[pattern.entry_combo], n)
        diagonal += pool.diagonal() + self.prior
        self.offsets: sparse.csr_matrix | None = None
        self.inverse_a = np.zeros(0)
        if groups is not None:
            total, _, ev = groups
            self.inverse_a = 1.0 / (total + 1.0 / w.difficulty)
            self.offsets = sparse.csr_matrix(
                (ev, (pattern.group_of, pattern.column_of)), shape=(lay.groups, n)
            )
            diagonal -= _sums(pattern.column_of, ev * ev * self.inverse_a[pattern.group_of], n)
        self.diagonal = diagonal
        self.size = n

    def __call__(self, x: Floats) -> Floats:
        out = self.design.T @ (self.combo_weight * (self.design @ x))
        out = out + self.pool @ x + self.prior * x
        if self.offsets is not None:
            out = out - self.offsets.T @ (self.inverse_a * (self.offsets @ x))
        return np.asarray(out, dtype=np.float64)

    def solve(self, rhs: Floats, start: Floats) -> Floats:
        """``H⁻¹ rhs`` by Jacobi-preconditioned conjugate gradients from ``start``."""
        n = self.size
        operator = sparse_linalg.LinearOperator((n, n), matvec=self, dtype=np.float64)
        scale = sparse_linalg.LinearOperator(
            (n, n), matvec=lambda x: x / self.diagonal, dtype=np.float64
        )
        found, _ = sparse_linalg.cg(operator, rhs, x0=start, rtol=_RTOL, maxiter=_MAX_STEPS,
                                    M=scale)  # fmt: skip
        return np.asarray(found, dtype=np.float64)


def solve_large(lay: Layout, pattern: Pattern, w: Weighted, start: Floats,
                across: Floats | None = None) -> tuple[Solution, Floats | None]:  # fmt: skip
    """Means by conjugate gradients from ``start`` under the anchors (the anchors'
    directions ``H⁻¹ Cᵀ`` from ``across``, the last round's: returned for the next);
    approximate variances."""
    n = lay.size
    groups = group_sums(pattern, lay, w) if lay.groups else None
    operator = _Operator(lay, pattern, w, groups)
    theta = operator.solve(right_side(pattern, lay, w, groups), start)
    constraints = anchors(lay, w.anchor)
    directions = None
    if len(constraints):
        if across is None or across.shape != (n, len(constraints)):
            across = np.zeros((n, len(constraints)))
        directions = np.stack(
            [operator.solve(c, across[:, i]) for i, c in enumerate(constraints)], axis=1
        )
        theta = theta - directions @ np.linalg.solve(constraints @ directions, constraints @ theta)
    offset = np.zeros(lay.groups)
    if groups is not None:
        total, wy, ev = groups
        eg, ej = pattern.group_of, pattern.column_of
        a = total + 1.0 / w.difficulty
        offset = (wy - np.bincount(eg, weights=ev * theta[ej], minlength=lay.groups)) / a
    var, offset_var = _variances(lay, w, pattern)
    fitted = _Made(lay, theta, var, offset, offset_var)
    return Solution(theta, var, None, offset, offset_var, fitted), directions
