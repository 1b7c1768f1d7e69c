"""The fit: every stored observation at once, re-weighted until nothing moves.

Each round solves the linear-Gaussian system (``system.py``) with the current weights,
then learns from what it left unexplained (one EM step):

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
from typing import Any

import numpy as np
import numpy.typing as npt

from agentladder.domain.skill.dynamics import Dynamics, MessageLayout, dynamics, message_layout
from agentladder.domain.skill.gauss import TWO_VALUED_FROM
from agentladder.domain.skill.large import solve_large
from agentladder.domain.skill.observations import Observations
from agentladder.domain.skill.pattern import Pattern, pattern_of
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.system import solve_system
from agentladder.domain.skill.terms import Layout, Solution, Weighted

__all__ = ["FitResult", "fit_observations", "layout_of"]

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
_LOG_2PI = math.log(2.0 * math.pi)


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
    dynamics: Dynamics
    exact: bool


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


def _log_ndtr(z: Floats) -> Floats:
    """log Φ(z), stable in the left tail."""
    out = np.empty_like(z)
    low = z < -5.0
    hi = ~low
    out[hi] = np.log(0.5 * _erfc(-z[hi] / math.sqrt(2.0)))
    zl = z[low]
    # asymptotic series of the Mills ratio
    out[low] = -0.5 * zl * zl - np.log(-zl) - 0.5 * _LOG_2PI + np.log1p(-1.0 / (zl * zl))
    return out


_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _inverse_mills(z: Floats) -> Floats:
    """φ(z) / (1 - Φ(z)): the mean of a standard normal beyond z."""
    return np.exp(-0.5 * z * z - 0.5 * _LOG_2PI - _log_ndtr(-z))


class _State:
    """What the rounds learn, beside the system's posterior."""

    def __init__(self, obs: Observations, lay: Layout, rules: SkillRules) -> None:
        k = len(obs)
        self.noise = np.full(lay.source_types, rules.noise_sd**2)
        self.source_noise = np.full(lay.sources, rules.noise_sd**2)
        self.honesty = np.full(lay.sources, rules.honesty_prior)
        self.clean = np.ones(k)
        self.type_spread = rules.type_spread**2
        self.leniency = rules.leniency_sd**2
        self.difficulty = rules.difficulty_sd**2
        self.spread_history: list[tuple[float, float, float]] = []
        self.value = obs.value.copy()
        self.extra = np.zeros(k)
        self.deviation = np.zeros(k)  # of each observation's skill from its pair's one value
        self.at_bounds = bound_shares(obs, lay.sources)
        self.two_valued = self.at_bounds > TWO_VALUED_FROM


def bound_shares(obs: Observations, sources: int) -> Floats:
    """Per source, the share of its scores at 0 or 10."""
    scored = obs.source >= 0
    src = obs.source[scored]
    count = np.bincount(src, minlength=sources).astype(np.float64)
    value = obs.value[scored]
    bounds = np.bincount(src, weights=((value <= 0.0) | (value >= 10.0)).astype(np.float64),
                         minlength=sources)  # fmt: skip
    return bounds / np.maximum(count, 1.0)


def _weights(obs: Observations, lay: Layout, st: _State, sol: Solution | None,
             rules: SkillRules) -> Weighted:  # fmt: skip
    scored = obs.source >= 0
    st_of = np.where(scored, lay.cols[:, 2] - lay.v0, 0)
    src = np.where(scored, obs.source, 0)
    weight = np.where(scored, st.honesty[src] * st.clean / st.noise[st_of], 0.0)
    value = st.value.copy()
    binary = obs.binary
    if binary.any():
        fitted = np.full(len(obs), rules.pass_threshold) if sol is None else sol.fitted
        f = (fitted + st.deviation)[binary]
        z = (f - rules.pass_threshold) / rules.pass_sd
        log_p = _log_ndtr(z)
        log_q = _log_ndtr(-z)
        dens = np.exp(-0.5 * z * z - 0.5 * _LOG_2PI)
        p = np.exp(log_p)
        fisher = dens * dens / np.maximum(np.exp(log_p + log_q), 1e-300)
        weight[binary] = fisher / rules.pass_sd**2
        y = obs.value[binary]
        value[binary] = f + (y - p) * rules.pass_sd / np.maximum(dens, 1e-300)
    # the scale: each source weighs in by what its scores say (its weight in the fit)
    anchor = _sums(st_of[scored], weight[scored], lay.source_types)
    return Weighted(
        weight=weight, value=value - st.deviation, anchor=anchor, type_spread=st.type_spread,
        ability=rules.ability_sd**2, level=rules.level_sd**2, level_mean=rules.prior_mean,
        leniency=st.leniency, type_leniency=rules.type_leniency_sd**2,
        difficulty=st.difficulty,
    )  # fmt: skip


def _censor(obs: Observations, st: _State, sol: Solution, expected: Floats,
            noise_k: Floats) -> None:  # fmt: skip
    """Scores at 0 or 10: their expected value beyond the bound, and that guess's variance;
    a two-valued source's (``gauss.TWO_VALUED_FROM``) taken as they are."""
    st.value = obs.value.copy()
    st.extra = np.zeros(len(obs))
    scored = obs.source >= 0
    sd = np.sqrt(noise_k + sol.fitted_var)
    censoring = scored & ~st.two_valued[np.where(scored, obs.source, 0)]
    for bound, sign in ((10.0, 1.0), (0.0, -1.0)):
        at = censoring & ((obs.value >= 10.0) if sign > 0 else (obs.value <= 0.0))
        if not at.any():
            continue
        z = sign * (bound - expected[at]) / sd[at]
        ratio = _inverse_mills(z)
        guess = expected[at] + sign * sd[at] * ratio
        st.value[at] = np.maximum(bound, guess) if sign > 0 else np.minimum(bound, guess)
        st.extra[at] = sd[at] ** 2 * np.maximum(0.0, 1.0 - ratio * (ratio - z))


_MAX_NOISE = 25.0
"""The noisiest a source is taken to be (sd 5: half the scale); beyond, its scores say
nothing anyway, and its estimate would only drift."""
_HONESTY_FROM = 3
"""The round from which honesty is learned: the first rounds down-weigh single wild scores
(the clean-score chances), so that honesty is then judged against a fit that a group of
dishonest sources has not already pulled."""


def _learn(obs: Observations, lay: Layout, pattern: Pattern, st: _State, sol: Solution,
           w: Weighted, deviation: Floats, rules: SkillRules, rounds: int) -> None:  # fmt: skip
    """One EM step: noise, clean-score chances, honesty, the spreads."""
    scored = obs.source >= 0
    st_of = np.where(scored, lay.cols[:, 2] - lay.v0, 0)
    src = np.where(scored, obs.source, 0)
    noise_k = st.noise[st_of]
    expected = sol.fitted + deviation
    _censor(obs, st, sol, expected, noise_k)
    mean = sol.mean
    lenient = np.where(
        scored, mean[np.maximum(lay.cols[:, 1], 0)] + mean[np.maximum(lay.cols[:, 2], 0)], 0.0
    )
    count = np.bincount(st_of[scored], minlength=lay.source_types).astype(np.float64)
    prior = 1.0 / (st.leniency + w.type_leniency)

    def residual(values: Floats) -> Floats:
        """Against the source's own leniency fitted to its scores, whatever its honesty."""
        base = values - expected + lenient
        own = _sums(st_of[scored], base[scored], lay.source_types)
        own = own / st.noise / (count / st.noise + prior)
        return np.where(scored, base - own[st_of], 0.0)

    var = noise_k + sol.fitted_var

    def mixed(r: Floats) -> tuple[Floats, Floats]:
        """A clean score of an honest source, or an arbitrary one: both log densities."""
        log_clean = math.log1p(-rules.outlier_share) - 0.5 * (_LOG_2PI + np.log(var))
        log_clean = log_clean - 0.5 * r * r / var
        return log_clean, np.logaddexp(log_clean, math.log(rules.outlier_share * 0.1))

    r = residual(st.value)
    e2 = r * r + sol.fitted_var + st.extra
    log_clean, log_mix = mixed(r)
    st.clean = _bounded(np.where(scored, np.exp(log_clean - log_mix), 1.0), src, scored,
                        lay.sources, rules)  # fmt: skip
    del r, log_clean, log_mix  # as long as the observations: not held while honesty is
    if rounds >= _HONESTY_FROM:
        # judged on the scores as given: a score at 0 or 10 taken at its bound, not as the
        # model would continue it (which would excuse a source that gives only 0 and 10)
        _honesty(obs, lay, pattern, st, w, mixed(residual(obs.value))[1], scored, src, rules)
    n_s = np.bincount(src[scored], weights=st.clean[scored], minlength=lay.sources)
    sums = np.bincount(src[scored], weights=(st.clean * e2)[scored], minlength=lay.sources)
    st.source_noise = (rules.noise_weight * rules.noise_sd**2 + sums) / (rules.noise_weight + n_s)
    st.source_noise = np.clip(st.source_noise, rules.min_noise_sd**2, _MAX_NOISE)
    n_st = np.bincount(st_of[scored], weights=st.clean[scored], minlength=lay.source_types)
    sums = np.bincount(st_of[scored], weights=(st.clean * e2)[scored], minlength=lay.source_types)
    pooled = st.source_noise[lay.st_source]
    st.noise = (rules.type_noise_weight * pooled + sums) / (rules.type_noise_weight + n_st)
    st.noise = np.clip(st.noise, rules.min_noise_sd**2, _MAX_NOISE)
    _spreads(lay, st, sol, rules)


def _bounded(clean: Floats, src: Ints, scored: npt.NDArray[np.bool_], sources: int,
             rules: SkillRules) -> Floats:  # fmt: skip
    """Each score's chance of being clean, with the wild weight of a source's scores
    bounded by what ``outlier_share`` plausibly gives of its ``n`` scores (``outlier_share
    * n`` and three binomial sd, plus one), the rest taken back in proportion. The mixture
    guards against a few wild scores; where far more of a source's scores look wild (scores
    of two modes: wins and losses), its noise is wider than a normal core, and taking them
    for wild made the fit a mode of the scores with intervals as narrow as that core (a
    public set of 45,875 preference judgments: estimates 1 to 3 points from the means, sd
    a sixth of the standard error). A source of one or two wild scores keeps them wild."""
    wild = np.where(scored, 1.0 - clean, 0.0)
    count = np.bincount(src[scored], minlength=sources).astype(np.float64)
    total = np.bincount(src[scored], weights=wild[scored], minlength=sources)
    expected = rules.outlier_share * count
    cap = np.minimum(count, expected + 3.0 * np.sqrt(expected) + 1.0)
    scale = np.where(total > cap, cap / np.maximum(total, 1e-300), 1.0)
    return np.where(scored, 1.0 - wild * scale[src], 1.0)


def _honesty(obs: Observations, lay: Layout, pattern: Pattern, st: _State, w: Weighted,
             log_mix: Floats, scored: npt.NDArray[np.bool_], src: Ints,
             rules: SkillRules) -> None:  # fmt: skip
    """Each source's chance that its scores follow the quality, from the checkable ones."""
    if not scored.any():
        return
    count = np.bincount(src[scored], minlength=lay.sources) + 1e-12
    given = obs.value
    centre = np.bincount(src[scored], weights=given[scored], minlength=lay.sources) / count
    spread = np.bincount(src[scored], weights=(given - centre[src])[scored] ** 2,
                         minlength=lay.sources) / count + 0.25  # fmt: skip
    d = given - centre[src]
    log_alt = -0.5 * (_LOG_2PI + np.log(spread[src])) - 0.5 * d * d / spread[src]
    log_alt = np.logaddexp(log_alt, math.log(rules.outlier_share * 0.1))
    # checkable: as far as other sources' evidence determines the observed pair
    lean = pattern.lean_of  # each observation's (skill, source): the same partition
    own = _sums(lean, w.weight, len(pattern.lean_pair))[lean][scored]
    pooled = 1.0 / (st.type_spread + rules.ability_sd**2)
    total = _sums(obs.pair, w.weight, lay.pairs)[obs.pair[scored]] + pooled
    check = np.clip(1.0 - own / total, 0.0, 1.0)
    said = np.bincount(src[scored], weights=check * (log_mix[scored] - log_alt[scored]),
                       minlength=lay.sources)  # fmt: skip
    odds = math.log(rules.honesty_prior / (1.0 - rules.honesty_prior)) + said
    st.honesty = 1.0 / (1.0 + np.exp(-np.clip(odds, -30.0, 30.0)))


def _spreads(lay: Layout, st: _State, sol: Solution, rules: SkillRules) -> None:
    """The spreads' EM steps, each with its prior worth ``hyper_weight`` observations."""
    prior_w = rules.hyper_weight
    diag = sol.var
    mean = sol.mean
    if lay.groups:
        squares = float(np.sum(sol.offset**2 + sol.offset_var))
        st.difficulty = (prior_w * rules.difficulty_sd**2 + squares) / (prior_w + lay.groups)
    if lay.sources:
        b = slice(lay.b0, lay.v0)
        squares = float(np.sum(mean[b] ** 2 + diag[b]))
        st.leniency = (prior_w * rules.leniency_sd**2 + squares) / (prior_w + lay.sources)
    p = np.arange(lay.pairs)
    q = lay.q0 + lay.pair_agent
    lv = lay.l0 + lay.pair_type
    resid = mean[p] - mean[q] - mean[lv]
    cross = sol.cross
    var = diag[p] + diag[q] + diag[lv] - 2 * cross(p, q) - 2 * cross(p, lv) + 2 * cross(q, lv)
    squares = float(np.sum(resid**2 + np.maximum(var, 0.0)))
    st.type_spread = (prior_w * rules.type_spread**2 + squares) / (prior_w + lay.pairs)
    st.spread_history.append((st.type_spread, st.leniency, st.difficulty))
    if len(st.spread_history) == 3:
        st.type_spread, st.leniency, st.difficulty = _aitken(st.spread_history)
        st.spread_history.clear()


def _aitken(history: list[tuple[float, float, float]]) -> tuple[float, float, float]:
    """Aitken's extrapolation of three successive EM steps of the spreads: a variance
    component's EM creeps towards its limit geometrically (slowest near a spread of zero,
    or where two spreads explain the same thing), so jump to the limit of the geometric
    series, where the steps are geometric (ratio in 0 to 0.95), at most by a factor 4."""
    out = []
    for x0, x1, last in zip(*history, strict=True):
        d1, d2 = x1 - x0, last - x1
        ratio = d2 / d1 if d1 != 0.0 else 0.0
        limit = last
        if 0.0 < ratio < 0.95:
            limit = min(4.0 * last, max(last / 4.0, last + d2 * ratio / (1.0 - ratio)))
        out.append(limit)
    return out[0], out[1], out[2]


def fit_observations(obs: Observations, rules: SkillRules) -> FitResult:
    """Re-weight and solve until no unknown moves more than ``fit_tolerance``."""
    lay = layout_of(obs)
    msg = message_layout(obs, lay, rules)
    st = _State(obs, lay, rules)
    sol: Solution | None = None
    rounds = 0
    moved = math.inf
    exact = lay.size <= rules.exact_limit
    pattern = pattern_of(lay, dense=exact)
    across = None
    while True:
        rounds += 1
        w = _weights(obs, lay, st, sol, rules)
        if exact:
            new = solve_system(lay, pattern, w)
        else:
            start = np.zeros(lay.size) if sol is None else sol.mean
            new, across = solve_large(lay, pattern, w, start, across)
        if sol is not None:
            moved = float(np.max(np.abs(new.mean - sol.mean), initial=0.0))
        sol = new
        said = w.value + st.deviation  # what each observation says, time and all
        dyn = dynamics(obs, lay, msg, sol, _chain_weight(obs, lay, st, w), said,
                       st.type_spread, rules)  # fmt: skip
        del said
        settled = moved < rules.fit_tolerance and rounds > _HONESTY_FROM
        done = rounds >= rules.fit_iterations or settled
        if done:
            break
        st.deviation = msg.observed(dyn.deviation(msg))
        _learn(obs, lay, pattern, st, sol, w, st.deviation, rules, rounds)
        del w, dyn  # a round's arrays, not held while the next is made
    return FitResult(
        obs=obs, lay=lay, solution=sol, noise=st.noise, source_noise=st.source_noise,
        honesty=st.honesty, at_bounds=st.at_bounds, clean=st.clean, weight=w.weight,
        value=w.value + st.deviation,
        type_spread=math.sqrt(st.type_spread), leniency=math.sqrt(st.leniency),
        difficulty=math.sqrt(st.difficulty), iterations=rounds, messages=msg, dynamics=dyn,
        exact=exact,
    )  # fmt: skip


def _chain_weight(obs: Observations, lay: Layout, st: _State, w: Weighted) -> Floats:
    """The weights the time chains take: a score's source's honesty over its noise (not
    whether the score looked clean against the system's one value: after a real change,
    the scores that show it would not), a binary outcome's working weight."""
    scored = obs.source >= 0
    st_of = np.where(scored, lay.cols[:, 2] - lay.v0, 0)
    src = np.where(scored, obs.source, 0)
    return np.where(scored, st.honesty[src] / st.noise[st_of], w.weight)
