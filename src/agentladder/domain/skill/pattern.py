"""Where the fit's precision matrix has entries, worked out once per fit: every round only
recomputes their values (the observations' weights change, the pattern does not).

Observations with the same columns (one agent's judgments by one judge at one task type)
share one design product; a deliberation's offset, integrated out, adds the products of
its design vector's entries; each skill's pooling around its agent's ability and its task
type's level adds a 3 x 3 block. ``slot`` maps every such product to its entry of the
matrix (compressed sparse rows); ``flat`` to its place in the dense matrix when that is
small enough to hold.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from agentladder.domain.skill.blocks import RunningSums, slices
from agentladder.domain.skill.observations import Index
from agentladder.domain.skill.terms import Layout, Weighted

__all__ = [
    "Pattern", "group_sums", "matrix_values", "pairs_within", "pattern_of", "prior_diagonal",
    "right_side",
]  # fmt: skip

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


def pairs_within(group: Ints) -> tuple[Ints, Ints]:
    """Every ordered pair (i, j) of entries of one group (entries sorted by group)."""
    counts = np.bincount(group)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    m = counts[group]
    first = np.repeat(np.arange(len(group)), m)
    offsets = np.arange(len(first)) - np.repeat(np.cumsum(m) - m, m)
    second = starts[group[first]] + offsets
    return first.astype(np.int64), second.astype(np.int64)


@dataclass(frozen=True)
class Pattern:
    """The fixed structure of one fit's system.

    - ``combo``: each observation's column combination; ``combo_cols`` (c, 3) its columns
      (-1: none); ``design_first``/``design_second``: the column pairs of each
      combination's product, as positions in ``combo_entry`` (combination, column);
    - ``group_k``: the observation of each grouped (observation, column) entry (in the
      order of the observations' columns), ``group_entry`` its (group, column) entry,
      whose groups and columns are ``group_of``, ``column_of``; ``group_first``/
      ``group_second``: the pairs of (group, column) entries within each group;
    - ``rows``, ``cols``: every product's matrix position, in the order values are made;
    - ``slot``: its index in the compressed matrix (``indptr``, ``indices``)."""

    size: int
    combo: Index
    combo_cols: Ints
    entry_combo: Ints
    entry_col: Ints
    design_first: Ints
    design_second: Ints
    group_k: Index
    group_entry: Index
    group_of: Ints
    column_of: Ints
    group_first: Ints
    group_second: Ints
    pool_rows: Ints
    pool_cols: Ints
    pool_sign: Floats
    rows: Ints
    cols: Ints
    slot: Ints
    indptr: Ints
    indices: Ints
    slot_row: Ints
    slot_col: Ints
    lean_of: Index
    lean_pair: Ints


def _combos(cols: Index, n: int) -> tuple[Ints, Index]:
    """The distinct rows of ``cols`` (k, 3; entries -1 to n-1) and each row's index."""
    base = np.int64(n + 1)  # the key in int64: (n + 1)³ overflows int32
    key = (cols[:, 0] + 1) * base * base + (cols[:, 1] + 1) * base + (cols[:, 2] + 1)
    uniq, inverse = np.unique(key, return_inverse=True)
    del key
    combos = np.stack([uniq // (base * base), (uniq // base) % base, uniq % base], axis=1) - 1
    return combos.astype(np.int64), inverse.reshape(-1).astype(np.int32)


def pattern_of(lay: Layout, dense: bool = True) -> Pattern:
    """The structure of the system of ``lay``; the dense matrix's slots only when
    ``dense`` (a large fleet's system is never formed: ``large.py``)."""
    n = lay.size
    combos, combo = _combos(lay.cols, n)
    c_index = np.repeat(np.arange(len(combos)), 3)
    c_cols = combos.ravel()
    keep = c_cols >= 0
    entry_combo, entry_col = c_index[keep].astype(np.int64), c_cols[keep].astype(np.int64)
    design_first, design_second = pairs_within(entry_combo)
    # the grouped observations' entries only: a table of judgments has none
    in_group = np.flatnonzero(lay.group >= 0)
    g_cols = lay.cols[in_group].ravel()
    g_keep = g_cols >= 0
    group_k = np.repeat(in_group, 3)[g_keep].astype(np.int32)
    key = lay.group[group_k].astype(np.int64) * n + g_cols[g_keep]
    uniq, inverse = np.unique(key, return_inverse=True)
    group_entry = inverse.reshape(-1).astype(np.int32)
    group_of, column_of = (uniq // n).astype(np.int64), (uniq % n).astype(np.int64)
    group_first, group_second = pairs_within(group_of) if len(uniq) else (uniq, uniq)
    p = np.arange(lay.pairs)
    trio = np.stack([p, lay.q0 + lay.pair_agent, lay.l0 + lay.pair_type], axis=1)
    sign = np.array([1.0, -1.0, -1.0])
    pool_rows = np.repeat(trio, 3, axis=1).ravel().astype(np.int64)
    pool_cols = np.tile(trio, (1, 3)).ravel().astype(np.int64)
    pool_sign = np.tile(np.outer(sign, sign).ravel(), lay.pairs)
    # each observation's (skill, source) pair: how much a skill leans on one source
    source_col = np.where(lay.cols[:, 1] >= 0, lay.cols[:, 1], -1)
    lean_key = lay.cols[:, 0].astype(np.int64) * (n + 1) + source_col + 1
    del source_col
    lean_uniq, lean_inverse = np.unique(lean_key, return_inverse=True)
    del lean_key
    lean_of = lean_inverse.reshape(-1).astype(np.int32)
    lean_pair = (lean_uniq // (n + 1)).astype(np.int64)
    none = np.zeros(0, dtype=np.int64)
    rows = cols = slot = indptr = indices = positions = none
    if dense:
        rows = np.concatenate([
            entry_col[design_first], pool_rows, np.arange(n), column_of[group_first],
        ]).astype(np.int64)  # fmt: skip
        cols = np.concatenate([
            entry_col[design_second], pool_cols, np.arange(n), column_of[group_second],
        ]).astype(np.int64)  # fmt: skip
        positions, slot = np.unique(rows * n + cols, return_inverse=True)
        indices = (positions % n).astype(np.int64)
        indptr = np.searchsorted(positions // n, np.arange(n + 1)).astype(np.int64)
    return Pattern(
        size=n, combo=combo, combo_cols=combos.astype(np.int64), entry_combo=entry_combo,
        entry_col=entry_col, design_first=design_first, design_second=design_second,
        group_k=group_k, group_entry=group_entry, group_of=group_of,
        column_of=column_of, group_first=group_first.astype(np.int64),
        group_second=group_second.astype(np.int64), pool_rows=pool_rows, pool_cols=pool_cols,
        pool_sign=pool_sign, rows=rows, cols=cols, slot=slot.reshape(-1).astype(np.int64),
        indptr=indptr, indices=indices, slot_row=(positions // n).astype(np.int64),
        slot_col=indices, lean_of=lean_of, lean_pair=lean_pair,
    )  # fmt: skip


def group_sums(pattern: Pattern, lay: Layout, w: Weighted) -> tuple[Floats, Floats, Floats]:
    """Per deliberation: its weights' sum and weighted values' sum; per (deliberation,
    column) entry its design vector's value (``pattern.group_of``, ``column_of``). Made
    block by block (``blocks.py``: the same sums as one pass)."""
    total, wy = RunningSums(lay.groups), RunningSums(lay.groups)
    for at in slices(len(lay.group)):
        group = lay.group[at]
        grouped = group >= 0
        weight = w.weight[at]
        total.add(group[grouped], weight[grouped])
        wy.add(group[grouped], (weight * w.value[at])[grouped])
    ev = RunningSums(len(pattern.group_of))
    for at in slices(len(pattern.group_k)):
        ev.add(pattern.group_entry[at], w.weight[pattern.group_k[at]])
    return total.total, wy.total, ev.total


def prior_diagonal(lay: Layout, w: Weighted) -> Floats:
    """The priors' precisions on the diagonal (abilities, levels, leniencies)."""
    diag = np.zeros(lay.size)
    diag[lay.q0 : lay.l0] = 1.0 / w.ability
    diag[lay.l0 : lay.b0] = 1.0 / w.level
    diag[lay.b0 : lay.v0] = 1.0 / w.leniency
    diag[lay.v0 :] = 1.0 / w.type_leniency
    return diag


def right_side(pattern: Pattern, lay: Layout, w: Weighted, groups: tuple[Floats, Floats, Floats]
               | None) -> Floats:  # fmt: skip
    """The precision-times-mean vector, for this round's weights (offsets integrated out
    with ``groups``: ``group_sums``)."""
    n = pattern.size
    # each of an observation's three columns is in a range of its own (skills, leniencies,
    # type leniencies), so the sums per column come to the same in the same order
    sums = [RunningSums(n) for _ in range(3)]
    for at in slices(len(lay.cols)):
        weights = w.weight[at] * w.value[at]
        cols = lay.cols[at]
        for slot, column in enumerate(sums):
            col = cols[:, slot]
            has = col >= 0
            column.add(col[has], weights[has])
    h: Floats = np.zeros(n)
    for column in sums:
        h += column.total
    h[lay.l0 : lay.b0] += w.level_mean / w.level
    if groups is not None:
        total, wy, ev = groups
        a = total + 1.0 / w.difficulty
        eg = pattern.group_of
        h -= np.bincount(pattern.column_of, weights=ev * wy[eg] / a[eg], minlength=n)
    return h


def matrix_values(pattern: Pattern, lay: Layout, w: Weighted) -> tuple[Floats, Floats]:
    """The precision matrix's entries (in ``slot`` order: ``indices``, ``indptr``) and the
    precision-times-mean vector, for this round's weights."""
    combo_weight = np.bincount(pattern.combo, weights=w.weight, minlength=len(pattern.combo_cols))
    design = combo_weight[pattern.entry_combo[pattern.design_first]]
    pool = pattern.pool_sign / w.type_spread
    parts = [design, pool, prior_diagonal(lay, w)]
    groups = group_sums(pattern, lay, w) if lay.groups else None
    h = right_side(pattern, lay, w, groups)
    if groups is not None:
        total, _, ev = groups
        a = total + 1.0 / w.difficulty
        eg = pattern.group_of
        first, second = pattern.group_first, pattern.group_second
        parts.append(-ev[first] * ev[second] / a[eg[first]])
    data = np.bincount(pattern.slot, weights=np.concatenate(parts), minlength=len(pattern.indices))
    return data.astype(np.float64), h.astype(np.float64)
