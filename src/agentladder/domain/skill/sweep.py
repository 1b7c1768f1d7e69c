"""The fit's system for a large fleet (more unknowns than ``exact_limit``): the same model
as ``system.py``, its means found by block Gauss-Seidel sweeps (each block's exact
conditional update: every skill, every deliberation's offset, every source's leniency,
every (source, task type)'s leniency under the scale's anchor, every ability, every level;
vectorized, so a sweep costs a few passes over the observations), its variances by a
first-order approximation: each unknown's conditional variance, plus the variances of the
unknowns its estimate leans on (its sources' leniencies, its deliberations' offsets, its
pooling prior), weighed by how much it leans on each. Covariances are not kept: the
variance of a combination (overall) is taken as if its parts were independent.

The sweeps start from the caller's start (the previous round's means, zero at first), so
that a fit from the priors remains a function of the evidence alone.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from agentladder.domain.skill.system import Layout, Solution, Weighted

__all__ = ["solve_large"]

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


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


def _fitted(theta: Floats, offset: Floats, ix: _Index) -> Floats:
    out = theta[ix.p] + np.where(ix.scored, theta[ix.b] + theta[ix.v], 0.0)
    if len(offset):
        out = out + np.where(ix.grouped, offset[ix.g], 0.0)
    return out


def _sweep(lay: Layout, w: Weighted, ix: _Index, theta: Floats, offset: Floats,
           anchor: Floats) -> None:  # fmt: skip
    """One pass of exact conditional updates, block by block, in place."""
    weight, y = w.weight, w.value
    if lay.groups:
        part = _fitted(theta, offset, ix) - np.where(ix.grouped, offset[ix.g], 0.0)
        sel = ix.grouped
        num = _sums(ix.g[sel], (weight * (y - part))[sel], lay.groups)
        den = _sums(ix.g[sel], weight[sel], lay.groups) + 1.0 / w.difficulty
        offset[:] = num / den
    # skills, given their pooling prior
    q = lay.q0 + lay.pair_agent
    lv = lay.l0 + lay.pair_type
    part = _fitted(theta, offset, ix) - theta[ix.p]
    num = _sums(ix.p, weight * (y - part), lay.pairs) + (theta[q] + theta[lv]) / w.type_spread
    den = _sums(ix.p, weight, lay.pairs) + 1.0 / w.type_spread
    theta[: lay.pairs] = num / den
    # sources' leniencies
    sc = ix.scored
    part = _fitted(theta, offset, ix) - np.where(sc, theta[ix.b], 0.0)
    src = ix.b[sc] - lay.b0
    num = _sums(src, (weight * (y - part))[sc], lay.sources)
    den = _sums(src, weight[sc], lay.sources) + 1.0 / w.leniency
    theta[lay.b0 : lay.v0] = num / den
    # (source, task type) leniencies, under each task type's anchor
    part = _fitted(theta, offset, ix) - np.where(sc, theta[ix.v], 0.0)
    st = ix.v[sc] - lay.v0
    num = _sums(st, (weight * (y - part))[sc], lay.source_types)
    den = _sums(st, weight[sc], lay.source_types) + 1.0 / w.type_leniency
    free = num / den
    total = _sums(lay.st_type, anchor, lay.types)
    share = np.where(
        total[lay.st_type] > 0.0, anchor / np.where(total > 0.0, total, 1.0)[lay.st_type], 0.0
    )
    off = _sums(lay.st_type, share * (theta[lay.b0 + lay.st_source] + free), lay.types)
    scale = _sums(lay.st_type, share * share / den, lay.types)
    mult = np.where(scale > 0.0, off / np.where(scale > 0.0, scale, 1.0), 0.0)
    theta[lay.v0 :] = free - mult[lay.st_type] * share / den
    # abilities and levels, given the skills
    inv = 1.0 / w.type_spread
    count_a = np.bincount(lay.pair_agent, minlength=lay.agents)
    resid = theta[: lay.pairs] - theta[lv]
    theta[lay.q0 : lay.l0] = _sums(lay.pair_agent, resid * inv, lay.agents) / (
        count_a * inv + 1.0 / w.ability
    )
    count_t = np.bincount(lay.pair_type, minlength=lay.types)
    resid = theta[: lay.pairs] - theta[q]
    theta[lay.l0 : lay.b0] = (
        _sums(lay.pair_type, resid * inv, lay.types) + w.level_mean / w.level
    ) / (count_t * inv + 1.0 / w.level)


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


def solve_large(lay: Layout, w: Weighted, start: Floats, start_offset: Floats,
                sweeps: int, tolerance: float) -> Solution:  # fmt: skip
    """Means by up to ``sweeps`` sweeps (fewer when none moves more than ``tolerance``),
    approximate variances."""
    ix = _Index(lay)
    theta = start.copy()
    offset = start_offset.copy() if len(start_offset) == lay.groups else np.zeros(lay.groups)
    for _ in range(sweeps):
        before = theta.copy()
        _sweep(lay, w, ix, theta, offset, w.anchor)
        if float(np.max(np.abs(theta - before), initial=0.0)) < tolerance:
            break
    var, offset_var = _variances(lay, w, ix)
    fitted = _fitted(theta, offset, ix)
    fitted_var = var[ix.p] + np.where(ix.scored, var[ix.b] + var[ix.v], 0.0)
    if lay.groups:
        fitted_var = fitted_var + np.where(ix.grouped, offset_var[ix.g], 0.0)
    return Solution(theta, var, None, offset, offset_var, fitted, fitted_var)
