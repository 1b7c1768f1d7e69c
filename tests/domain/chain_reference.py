"""The chains' run as it was before it ran in place (``domain/skill/chain.py``): the
moving filter's path, its predicted and filtered variances and the smoothed means each in
an array of its own. Kept as the reference the in-place run is compared with
(``test_skill_chain_inplace.py``)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from agentladder.domain.skill.chain import Chains
from agentladder.domain.skill.rules import SkillRules

Floats = npt.NDArray[np.float64]


def run_chains(
    chains: Chains, start_mean: Floats, start_var: Floats, mean: Floats, var: Floats,
    rules: SkillRules,
) -> tuple[Floats, Floats, Floats, Floats, Floats, Floats, Floats, Floats, Floats]:  # fmt: skip
    """Per pair both filters' ends (still: mean, var; moving: mean, var, drop, rise); per
    message in chain order the moving filter's path (mean, var) and the smoothed mean."""
    n_pairs = len(start_mean)
    still_m, still_v = start_mean.copy(), start_var.copy()
    move_m, move_v = start_mean.copy(), start_var.copy()
    drop, rise = np.zeros(n_pairs), np.zeros(n_pairs)
    path_m, path_v = np.zeros(len(mean)), np.zeros(len(mean))
    predicted, filtered = np.zeros(len(mean)), np.zeros(len(mean))
    threshold, half = rules.change_threshold, rules.change_threshold / 2.0
    by_rank, bounds = chains.by_rank, chains.bounds
    for r in range(len(bounds) - 1):
        m = by_rank[bounds[r] : bounds[r + 1]]
        p = chains.pair[m]
        sv = 1.0 / (1.0 / still_v[p] + 1.0 / var[m])
        still_m[p] = sv * (still_m[p] / still_v[p] + mean[m] / var[m])
        still_v[p] = sv
        prior_v = move_v[p] + chains.added[m]
        post_v = 1.0 / (1.0 / prior_v + 1.0 / var[m])
        post_m = post_v * (move_m[p] / prior_v + mean[m] / var[m])
        predicted[m], filtered[m] = prior_v, post_v
        if threshold > 0.0:
            z = np.clip((mean[m] - move_m[p]) / np.sqrt(prior_v + var[m]), -half, half)
            d = np.maximum(0.0, drop[p] - z - rules.change_allowance)
            u = np.maximum(0.0, rise[p] + z - rules.change_allowance)
            changed = (d > threshold) | (u > threshold)
            post_v = post_v + np.where(changed, rules.change_sd**2, 0.0)
            drop[p] = np.where(changed, 0.0, d)
            rise[p] = np.where(changed, 0.0, u)
        move_m[p], move_v[p] = post_m, post_v
        path_m[m], path_v[m] = post_m, post_v
    smooth = path_m.copy()
    n = len(path_m)
    for r in range(len(bounds) - 2, -1, -1):
        m = by_rank[bounds[r] : bounds[r + 1]]
        nxt = m + 1
        has = nxt < n
        m, nxt = m[has], nxt[has]
        same = chains.pair[nxt] == chains.pair[m]
        m, nxt = m[same], nxt[same]
        gain = filtered[m] / predicted[nxt]
        smooth[m] = path_m[m] + gain * (smooth[nxt] - path_m[m])
    return (still_m, still_v, move_m, move_v + chains.late, drop, rise, path_m, path_v,
            smooth)  # fmt: skip
