"""The fit's EM step (``fit.py``): what a round learns from what the system's solution left
unexplained, made block by block (``blocks.py``): every temporary is as long as a block, not
as the observations, and every sum is the one a single pass over them gives, bit for bit.

- each source's **noise** per task type (pooled to its own, pooled to ``noise_sd``);
- each score's chance of being a clean one (a contaminated normal), its wild weight bounded;
- each source's **honesty**, judged on the scores the other sources can check;
- each score at 0 or 10 as "this or beyond" (one Tobit step);
- the spreads: of agents' skill per task type, of leniencies, of deliberations' offsets.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

from agentladder.domain.skill.blocks import RunningSums, slices
from agentladder.domain.skill.censored import LOG_2PI, Censored, log_ndtr
from agentladder.domain.skill.observations import Observations
from agentladder.domain.skill.pattern import Pattern
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.terms import Layout, Solution, Weighted

__all__ = ["LOG_2PI", "State", "bound_shares", "learn", "log_ndtr"]

Floats = npt.NDArray[np.float64]
_MAX_NOISE = 25.0
"""The noisiest a source is taken to be (sd 5: half the scale); beyond, its scores say
nothing anyway, and its estimate would only drift."""
HONESTY_FROM = 3
"""The round from which honesty is learned: the first rounds down-weigh single wild scores
(the clean-score chances), so that honesty is then judged against a fit that a group of
dishonest sources has not already pulled."""


class State:
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
        self.censored = Censored(obs)  # the working values and their extra variance
        self.deviation = np.zeros(k)  # of each observation's skill from its pair's one value
        self.at_bounds = bound_shares(obs, lay.sources)
        self.censoring = np.array([rules.censors(name) for name in obs.sources], dtype=bool)


def bound_shares(obs: Observations, sources: int) -> Floats:
    """Per source, the share of its scores at 0 or 10."""
    scored = obs.source >= 0
    src = obs.source[scored]
    count = np.bincount(src, minlength=sources).astype(np.float64)
    value = obs.value[scored]
    bounds = np.bincount(src, weights=((value <= 0.0) | (value >= 10.0)).astype(np.float64),
                         minlength=sources)  # fmt: skip
    return bounds / np.maximum(count, 1.0)


class _Block:
    """One block's view of a round: each observation's source and (source, task type)
    (0 where it has none), what the fit expects of it, its sources' leniencies, its noise."""

    def __init__(self, obs: Observations, lay: Layout, st: State, sol: Solution,
                 deviation: Floats, at: slice) -> None:  # fmt: skip
        self.at = at
        cols = lay.cols[at]
        self.scored = scored = obs.source[at] >= 0
        self.st_of = np.where(scored, cols[:, 2] - lay.v0, 0)
        self.src = np.where(scored, obs.source[at], 0)
        self.noise_k = st.noise[self.st_of]
        fitted, self.fitted_var = sol.fitted.at(at)
        self.expected = fitted + deviation[at]
        mean = sol.mean
        self.lenient = np.where(
            scored, mean[np.maximum(cols[:, 1], 0)] + mean[np.maximum(cols[:, 2], 0)], 0.0
        )

    def base(self, values: Floats) -> Floats:
        """What the block's scores (``values``) say of their sources' leniency, as the fit
        stands."""
        return values - self.expected + self.lenient

    def mixed(self, r: Floats, rules: SkillRules, checked: Floats) -> tuple[Floats, Floats]:
        """A clean score of an honest source, or an arbitrary one: both log densities. The
        chance of an arbitrary score is ``outlier_share`` times how far other sources'
        evidence checks the score's pair (``checked``): a score no other source can
        contradict (a lone judge's) is the agent's, whatever it is."""
        var = self.noise_k + self.fitted_var
        share = np.maximum(rules.outlier_share * checked, 1e-300)
        log_clean = np.log1p(-share) - 0.5 * (LOG_2PI + np.log(var))
        log_clean = log_clean - 0.5 * r * r / var
        return log_clean, np.logaddexp(log_clean, np.log(share * 0.1))


def _each(obs: Observations, lay: Layout, st: State, sol: Solution,
          deviation: Floats) -> Iterator[_Block]:  # fmt: skip
    """The round's blocks, in order, each made when it is reached."""
    for at in slices(len(obs)):
        yield _Block(obs, lay, st, sol, deviation, at)


class _Own:
    """Each (source, task type)'s leniency fitted to its scores, whatever its honesty: the
    residuals are taken against it."""

    def __init__(self, sums: Floats, count: Floats, st: State, prior: float) -> None:
        self.own = sums / st.noise / (count / st.noise + prior)

    def residual(self, block: _Block, base: Floats) -> Floats:
        return np.where(block.scored, base - self.own[block.st_of], 0.0)


def learn(obs: Observations, lay: Layout, pattern: Pattern, st: State, sol: Solution,
          w: Weighted, deviation: Floats, rules: SkillRules, rounds: int) -> None:  # fmt: skip
    """One EM step: noise, clean-score chances, honesty, the spreads."""
    if not lay.sources:  # no score at all (a fleet judged pass or fail only): no source
        _spreads(lay, st, sol, rules)  # has a noise, a clean chance or an honesty to learn
        return
    prior = 1.0 / (st.leniency + w.type_leniency)
    own_sums = RunningSums(lay.source_types)
    count = np.zeros(lay.source_types)
    per_source = np.zeros(lay.sources)
    lean, pair = RunningSums(len(pattern.lean_pair)), RunningSums(lay.pairs)
    for b in _each(obs, lay, st, sol, deviation):
        _censor(obs, st, b)
        s = b.scored
        own_sums.add(b.st_of[s], b.base(st.censored.values(b.at))[s])
        count += np.bincount(b.st_of[s], minlength=lay.source_types)
        per_source += np.bincount(b.src[s], minlength=lay.sources)
        lean.add(pattern.lean_of[b.at], w.weight[b.at])
        pair.add(obs.pair[b.at], w.weight[b.at])
    own = _Own(own_sums.total, count, st, prior)
    wild = RunningSums(lay.sources)
    for b in _each(obs, lay, st, sol, deviation):
        checked = _checked(lean.total, pair.total, pattern, obs, b.at)
        residual = own.residual(b, b.base(st.censored.values(b.at)))
        log_clean, log_mix = b.mixed(residual, rules, checked)
        st.clean[b.at] = np.where(b.scored, np.exp(log_clean - log_mix), 1.0)
        wild.add(b.src[b.scored], np.where(b.scored, 1.0 - st.clean[b.at], 0.0)[b.scored])
    if rounds >= HONESTY_FROM and per_source.sum() > 0:
        _honesty(obs, lay, pattern, st, sol, w, deviation, per_source, prior, rules)
    scale = _wild_scale(wild.total, per_source, rules)
    n_s, sums = RunningSums(lay.sources), RunningSums(lay.sources)
    n_st, sums_st = RunningSums(lay.source_types), RunningSums(lay.source_types)
    for b in _each(obs, lay, st, sol, deviation):
        s = b.scored
        raw = st.clean[b.at]
        wild_k = np.where(s, 1.0 - raw, 0.0)
        clean = np.where(s, 1.0 - wild_k * scale[b.src], 1.0)
        st.clean[b.at] = clean
        r = own.residual(b, b.base(st.censored.values(b.at)))
        e2 = r * r + b.fitted_var + st.censored.extras(b.at)
        n_s.add(b.src[s], clean[s])
        sums.add(b.src[s], (clean * e2)[s])
        n_st.add(b.st_of[s], clean[s])
        sums_st.add(b.st_of[s], (clean * e2)[s])
    source_noise = (rules.noise_weight * rules.noise_sd**2 + sums.total) / (
        rules.noise_weight + n_s.total
    )
    st.source_noise = np.clip(source_noise, rules.min_noise_sd**2, _MAX_NOISE)
    pooled = st.source_noise[lay.st_source]
    noise = (rules.type_noise_weight * pooled + sums_st.total) / (
        rules.type_noise_weight + n_st.total
    )
    st.noise = np.clip(noise, rules.min_noise_sd**2, _MAX_NOISE)
    _spreads(lay, st, sol, rules)


def _checked(lean: Floats, pair: Floats, pattern: Pattern, obs: Observations,
             at: slice) -> Floats:  # fmt: skip
    """How far other sources' scores check each observation's pair (agent, task type): the
    share of the pair's weight that other sources hold (0 for a lone judge's scores, about
    4/5 for one of five peers'). Unlike the honesty's ``check``, the prior does not count:
    only a score another source can contradict may be called wild."""
    leaned = lean[pattern.lean_of[at]]
    total = pair[obs.pair[at]]
    share = (total - leaned) / np.maximum(total, 1e-300)
    return np.asarray(np.clip(share, 0.0, 1.0), dtype=np.float64)


def _censor(obs: Observations, st: State, b: _Block) -> None:
    """Scores at 0 or 10 of a censored judge (``SkillRules.censored_judges``): their
    expected value beyond the bound, and that guess's variance; every other source's taken
    as they are."""
    sd = np.sqrt(b.noise_k + b.fitted_var)
    st.censored.step(b.at, b.expected, sd, b.scored & st.censoring[b.src])


def _wild_scale(total: Floats, count: Floats, rules: SkillRules) -> Floats:
    """Per source, the share of its scores' wild weight kept: bounded by what
    ``outlier_share`` plausibly gives of its ``n`` scores (``outlier_share * n`` and three
    binomial sd, plus one), the rest taken back in proportion. The mixture guards against a
    few wild scores; where far more of a source's scores look wild (scores of two modes:
    wins and losses), its noise is wider than a normal core, and taking them for wild made
    the fit a mode of the scores with intervals as narrow as that core (a public set of
    45,875 preference judgments: estimates 1 to 3 points from the means, sd a sixth of the
    standard error). A source of one or two wild scores keeps them wild."""
    expected = rules.outlier_share * count
    cap = np.minimum(count, expected + 3.0 * np.sqrt(expected) + 1.0)
    return np.where(total > cap, cap / np.maximum(total, 1e-300), 1.0)


def _honesty(obs: Observations, lay: Layout, pattern: Pattern, st: State, sol: Solution,
             w: Weighted, deviation: Floats, per_source: Floats, prior: float,
             rules: SkillRules) -> None:  # fmt: skip
    """Each source's chance that its scores follow the quality, from the checkable ones:
    judged on the scores as given (a score at 0 or 10 taken at its bound, not as the model
    would continue it, which would excuse a source that gives only 0 and 10)."""
    count = per_source + 1e-12
    own_sums, centre = RunningSums(lay.source_types), RunningSums(lay.sources)
    lean, pair = RunningSums(len(pattern.lean_pair)), RunningSums(lay.pairs)
    st_count = np.zeros(lay.source_types)
    given = obs.value
    for b in _each(obs, lay, st, sol, deviation):
        s = b.scored
        own_sums.add(b.st_of[s], b.base(given[b.at])[s])
        st_count += np.bincount(b.st_of[s], minlength=lay.source_types)
        centre.add(b.src[s], given[b.at][s])
        lean.add(pattern.lean_of[b.at], w.weight[b.at])
        pair.add(obs.pair[b.at], w.weight[b.at])
    own = _Own(own_sums.total, st_count, st, prior)
    mid = centre.total / count
    spread_sums, resid_sums = RunningSums(lay.sources), RunningSums(lay.sources)
    for b in _each(obs, lay, st, sol, deviation):
        s = b.scored
        spread_sums.add(b.src[s], (given[b.at] - mid[b.src])[s] ** 2)
        r = own.residual(b, b.base(given[b.at]))
        resid_sums.add(b.src[s], (r * r + b.fitted_var)[s])
    # each side's variance is its own scores' (both plus a quarter point squared): the
    # learned noise is of the clean core, and against the raw spread of the alternative
    # it lost for a judge of two close agents (two judges of 2,046 scores each: honesty 0)
    spread = spread_sums.total / count + 0.25
    resid = resid_sums.total / count + 0.25
    pooled = 1.0 / (st.type_spread + rules.ability_sd**2)
    said = RunningSums(lay.sources)
    floor = math.log(rules.outlier_share * 0.1)
    for b in _each(obs, lay, st, sol, deviation):
        s = b.scored
        r = own.residual(b, b.base(given[b.at]))
        log_mix = -0.5 * (LOG_2PI + np.log(resid[b.src])) - 0.5 * r * r / resid[b.src]
        log_mix = np.logaddexp(log_mix, floor)
        d = given[b.at] - mid[b.src]
        log_alt = -0.5 * (LOG_2PI + np.log(spread[b.src])) - 0.5 * d * d / spread[b.src]
        log_alt = np.logaddexp(log_alt, floor)
        # checkable: as far as other sources' evidence determines the observed pair
        leaned = lean.total[pattern.lean_of[b.at]][s]
        total = pair.total[obs.pair[b.at][s]] + pooled
        check = np.clip(1.0 - leaned / total, 0.0, 1.0)
        said.add(b.src[s], check * (log_mix[s] - log_alt[s]))
    odds = math.log(rules.honesty_prior / (1.0 - rules.honesty_prior)) + said.total
    st.honesty = 1.0 / (1.0 + np.exp(-np.clip(odds, -30.0, 30.0)))


def _spreads(lay: Layout, st: State, sol: Solution, rules: SkillRules) -> None:
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
