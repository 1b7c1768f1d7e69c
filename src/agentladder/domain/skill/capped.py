"""A caller's feedback counted as a bounded number of scores (docs/skill.md, "Feedback").

A client rating the gateway's answers is a source like any judge (``judge:feedback:<name>``)
whose noise, leniency and honesty the fit learns; but volume must not buy weight: one
client's scores of one agent at one task type count as at most ``most`` scores. Past that,
``most`` of them are kept, evenly spread over their values sorted (the lowest, the highest
and the quantiles between: a thumbs-up share is kept), the rest left out of the fit. Which
rows are kept depends on the set of scores, not on their arrival order (rows are in the
table's canonical order, and ties in value keep that order).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from agentladder.domain.skill.observations import Observations, judge_source

__all__ = ["FEEDBACK_SOURCE", "capped"]

FEEDBACK_SOURCE = judge_source("feedback:")
"""The name prefix of every caller's feedback source."""


def _spread(count: int, most: int) -> np.ndarray:
    """``most`` positions among ``count`` sorted values, evenly spread, ends included."""
    if most == 1:
        return np.array([count // 2])
    return np.rint(np.linspace(0, count - 1, most)).astype(np.int64)


def capped(obs: Observations, most: int) -> Observations:
    """``obs`` with at most ``most`` scores of each feedback source per (agent, task
    type); the same table when none has more."""
    feedback = np.array([name.startswith(FEEDBACK_SOURCE) for name in obs.sources], dtype=bool)
    if not feedback.any():
        return obs
    scored = (obs.source >= 0) & ~obs.binary
    rows = np.flatnonzero(scored & feedback[np.maximum(obs.source, 0)])
    if len(rows) <= most:
        return obs
    key = obs.source[rows].astype(np.int64) * max(1, len(obs.pairs)) + obs.pair[rows]
    order = np.lexsort((obs.value[rows], key))  # by key, then value; ties as they stand
    ranked, keys = rows[order], key[order]
    _, starts, counts = np.unique(keys, return_index=True, return_counts=True)
    keep = np.ones(len(obs), dtype=bool)
    for start, count in zip(starts.tolist(), counts.tolist(), strict=True):
        if count <= most:
            continue
        group = ranked[start : start + count]
        kept = np.zeros(count, dtype=bool)
        kept[_spread(count, most)] = True
        keep[group[~kept]] = False
    if keep.all():
        return obs
    return replace(
        obs,
        pair=obs.pair[keep],
        source=obs.source[keep],
        group=obs.group[keep],
        event=obs.event[keep],
        value=obs.value[keep],
        binary=obs.binary[keep],
        at=obs.at[keep],
        history=obs.history[keep],
    )
