"""The fit: every stored observation at once, re-weighted until nothing moves.

Each round solves the linear-Gaussian system (``system.py``) with the current weights,
then learns from what it left unexplained (one EM step, ``learn.py``):

- each source's **noise** per task type (pooled to its own, pooled to ``noise_sd``);
- each score's chance of being a clean one (a contaminated normal: an honest source's
  score is arbitrary with chance ``outlier_share``), so one wild score counts little;
- each source's **honesty**: do its scores follow the quality at all, or would its own
  spread of scores predict them as well? Judged only on scores that the *other* sources'
  evidence can check, and with the source's own leniency fitted to its scores, so a harsh
  but consistent judge is honest and a lone judge is not judged at all;
- each score at 0 or 10 as "this or beyond" (one Tobit step);
- the spreads: of agents' skill per task type, of leniencies, of deliberations' offsets.

It starts from the priors every time and orders the evidence canonically
(``observations.py``), so the same evidence gives the same estimates whatever order it
arrived in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from agentladder.domain.skill.anchor import anchor_variance, anchor_weights, references
from agentladder.domain.skill.capped import capped
from agentladder.domain.skill.chain import Run
from agentladder.domain.skill.dynamics import (
    MessageLayout,
    deviation,
    dynamics,
    message_layout,
)
from agentladder.domain.skill.large import solve_large
from agentladder.domain.skill.learn import HONESTY_FROM, LOG_2PI, State, learn, log_ndtr
from agentladder.domain.skill.observations import Observations
from agentladder.domain.skill.pattern import pattern_of
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.system import solve_system
from agentladder.domain.skill.terms import Layout, Solution, Weighted

__all__ = ["FitResult", "fit_observations", "layout_of"]

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class FitResult:
    """The fit's posterior and what it learned; indices as in ``obs`` and ``lay``."""

    obs: Observations
    lay: Layout
    solution: Solution
    noise: Floats  # per (source, task type): variance
    source_noise: Floats  # per source: variance
    honesty: Floats  # per source
    at_bounds: Floats  # per source: the share of its scores at 0 or 10
    clean: Floats  # per observation: chance it is a clean score
    weight: Floats  # per observation: its final weight
    value: Floats  # per observation: its (working, uncensored) value
    type_spread: float
    leniency: float
    difficulty: float
    iterations: int
    messages: MessageLayout
    dynamics: Run  # its paths kept
    exact: bool
    anchor: Floats  # per (source, task type): its weight in the scale's anchor
    scale_var: Floats  # per task type: the anchor's own variance (``anchor.py``)


def layout_of(obs: Observations) -> Layout:
    """The unknowns of the evidence's system, and each observation's columns."""
    agents = obs.agents
    types = obs.types
    agent_at = {a: i for i, a in enumerate(agents)}
    type_at = {t: i for i, t in enumerate(types)}
    pair_agent = np.array([agent_at[a] for a, _ in obs.pairs], dtype=np.int64)
    pair_type = np.array([type_at[t] for _, t in obs.pairs], dtype=np.int64)
    scored = obs.source >= 0
    st_key = obs.source * len(types) + pair_type[obs.pair]
    keys = np.unique(st_key[scored])
    st_source, st_type = keys // max(len(types), 1), keys % max(len(types), 1)
    st_index = np.searchsorted(keys, st_key)
    pairs, n_agents, n_types = len(obs.pairs), len(agents), len(types)
    b0 = pairs + n_agents + n_types
    v0 = b0 + len(obs.sources)
    cols = np.full((len(obs), 3), -1, dtype=np.int32)
    cols[:, 0] = obs.pair
    cols[scored, 1] = b0 + obs.source[scored]
    cols[scored, 2] = v0 + st_index[scored]
    return Layout(
        pairs=pairs, agents=n_agents, types=n_types, sources=len(obs.sources),
        source_types=len(keys), pair_agent=pair_agent, pair_type=pair_type,
        st_source=st_source.astype(np.int64), st_type=st_type.astype(np.int64), cols=cols,
        group=obs.group, groups=obs.group_count,
    )  # fmt: skip


def _sums(index: npt.NDArray[np.integer[Any]], weights: Floats, size: int) -> Floats:
    """The weights summed per index (0 to ``size``)."""
    return np.bincount(index, weights=weights, minlength=size).astype(np.float64)


LONE_LEVEL_SD = 4.0
"""A task type one agent alone has evidence at: its level's prior sd, in ``level_sd``s."""


def _level_var(lay: Layout, rules: SkillRules) -> Floats:
    """Per task type, its level's prior variance: ``level_sd``², and 16 times that where
    one agent alone has evidence: there the prior mean of levels (``prior_mean``) would
    read the agent's scores as its ability against every other type's (1,000 self-judged
    10s over 50 types of its own put an agent of quality 3 first overall, +65 sd), when
    nothing compares it with another agent there."""
    agents = np.bincount(lay.pair_type, minlength=lay.types)
    return np.where(agents > 1, rules.level_sd**2, (LONE_LEVEL_SD * rules.level_sd) ** 2)


def _lenient(lay: Layout, sol: Solution) -> Floats:
    """Per (source, task type): its leniency there (the source's and its own beside)."""
    return sol.mean[lay.b0 + lay.st_source] + sol.mean[lay.v0 : lay.v0 + lay.source_types]


def _lenient_var(lay: Layout, sol: Solution) -> Floats:
    """Per (source, task type): its leniency's variance there (the source's and its own
    beside, with their covariance where the solve kept it)."""
    b = (lay.b0 + lay.st_source).astype(np.int64)
    v = np.arange(lay.v0, lay.v0 + lay.source_types, dtype=np.int64)
    return np.maximum(sol.var[b] + sol.var[v] + 2.0 * sol.cross(b, v), 0.0)


def _weights(obs: Observations, lay: Layout, st: State, sol: Solution | None,
             rules: SkillRules, counts: Floats,
             reference: npt.NDArray[np.bool_]) -> Weighted:  # fmt: skip
    scored = obs.source >= 0
    st_of = np.where(scored, lay.cols[:, 2] - lay.v0, 0)
    src = np.where(scored, obs.source, 0)
    weight = np.zeros(len(obs))  # an outcome without a score has no source (and maybe
    # no source exists at all: a fleet judged pass or fail only), weighted below
    weight[scored] = st.honesty[src[scored]] * st.clean[scored] / st.noise[st_of[scored]]
    value = st.censored.values(slice(None))
    binary = obs.binary
    if binary.any():
        at = np.flatnonzero(binary)
        fitted = np.full(len(at), rules.pass_threshold) if sol is None else sol.fitted.at(at)[0]
        f = fitted + st.deviation[at]
        z = (f - rules.pass_threshold) / rules.pass_sd
        log_p = log_ndtr(z)
        log_q = log_ndtr(-z)
        dens = np.exp(-0.5 * z * z - 0.5 * LOG_2PI)
        p = np.exp(log_p)
        fisher = dens * dens / np.maximum(np.exp(log_p + log_q), 1e-300)
        weight[binary] = fisher / rules.pass_sd**2
        y = obs.value[binary]
        value[binary] = f + (y - p) * rules.pass_sd / np.maximum(dens, 1e-300)
    # the scale: each source by its scores, up to a cap; far ones less (``anchor.py``)
    lenient = None if sol is None else _lenient(lay, sol)
    anchor = anchor_weights(lay, st.honesty, counts, reference, lenient, rules)
    return Weighted(
        weight=weight, value=value - st.deviation, anchor=anchor, type_spread=st.type_spread,
        ability=rules.ability_sd**2, level=_level_var(lay, rules), level_mean=rules.prior_mean,
        leniency=st.leniency, type_leniency=rules.type_leniency_sd**2,
        difficulty=st.difficulty,
    )  # fmt: skip


def fit_observations(obs: Observations, rules: SkillRules) -> FitResult:
    """Re-weight and solve until no unknown moves more than ``fit_tolerance`` (callers'
    feedback counted at most ``feedback_scores`` times per agent and task type:
    ``capped.py``)."""
    obs = capped(obs, rules.feedback_scores)
    lay = layout_of(obs)
    msg = message_layout(obs, lay, rules)
    st = State(obs, lay, rules)
    sol: Solution | None = None
    rounds = 0
    moved = math.inf
    exact = lay.size <= rules.exact_limit
    pattern = pattern_of(lay, dense=exact)
    across = None
    reference = references(list(obs.sources), rules)
    scored = obs.source >= 0
    counts = _sums(lay.cols[scored, 2] - lay.v0, np.ones(int(scored.sum())), lay.source_types)
    del scored
    while True:
        rounds += 1
        w = _weights(obs, lay, st, sol, rules, counts, reference)
        if exact:
            new = solve_system(lay, pattern, w)
        else:
            start = np.zeros(lay.size) if sol is None else sol.mean
            new, across = solve_large(lay, pattern, w, start, across)
        if sol is not None:
            moved = float(np.max(np.abs(new.mean - sol.mean), initial=0.0))
        sol = new
        inputs = partial(_chain_inputs, obs, lay, st, w)
        settled = moved < rules.fit_tolerance and rounds > HONESTY_FROM
        if rounds >= rules.fit_iterations or settled:
            dyn = dynamics(obs, lay, msg, sol, inputs, st.type_spread, rules)
            break
        # the rounds before the last need only each observation's deviation of the chains
        st.deviation = deviation(obs, lay, msg, sol, inputs, st.type_spread, rules)
        learn(obs, lay, pattern, st, sol, w, st.deviation, rules, rounds)
        del w, inputs  # a round's arrays, not held while the next is made
    scale_var = anchor_variance(
        lay, w.anchor, _lenient(lay, sol), _lenient_var(lay, sol), reference, rules
    )
    return FitResult(
        obs=obs, lay=lay, solution=sol, noise=st.noise, source_noise=st.source_noise,
        honesty=st.honesty, at_bounds=st.at_bounds, clean=st.clean, weight=w.weight,
        value=w.value + st.deviation,
        type_spread=math.sqrt(st.type_spread), leniency=math.sqrt(st.leniency),
        difficulty=math.sqrt(st.difficulty), iterations=rounds, messages=msg, dynamics=dyn,
        exact=exact, anchor=w.anchor,
        scale_var=scale_var,
    )  # fmt: skip


def _chain_inputs(obs: Observations, lay: Layout, st: State, w: Weighted,
                  at: npt.NDArray[np.integer[Any]] | slice) -> tuple[Floats, Floats]:  # fmt: skip
    """The weights and values the time chains take at ``at``: a score's source's honesty
    over its noise (not whether the score looked clean against the system's one value:
    after a real change, the scores that show it would not), a binary outcome's working
    weight; what each observation says, time and all."""
    source = obs.source[at]
    scored = source >= 0
    st_of = np.where(scored, lay.cols[at, 2] - lay.v0, 0)
    weight = np.array(w.weight[at], dtype=np.float64)  # a binary outcome's, a copy
    weight[scored] = st.honesty[source[scored]] / st.noise[st_of[scored]]
    return weight, w.value[at] + st.deviation[at]
