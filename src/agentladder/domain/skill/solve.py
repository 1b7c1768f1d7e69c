"""One deliberation's linear-Gaussian model, solved exactly with re-weighting passes.

Unknowns: each author's quality relative to the task type's level (prior: its
estimate), each evaluator's leniency (prior: its record), each round's offset (prior: 0
and the fleet's learned offset spread), and one shift of the task type's level shared by
all authors (prior: 0 and the level's uncertainty). The shared shift is what
assumed-density filtering would otherwise lose: agents' estimates become precise
relative to each other long before their common level is, and with independent
estimates only, the round offsets would absorb the common error for good.

A raw score weighs ``honesty x robustness / noise``: honesty is the evaluator's
probability of scoring honestly (rather than arbitrarily), robustness the Student-t
weight of the score's residual. The honest evaluators' leniencies in one deliberation
average to zero (the scale is the average honest evaluator's). A reported aggregated
score has no evaluator and the noise ``aggregate_noise_sd``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from agentladder.domain.skill.evidence import DeliberationEvidence
from agentladder.domain.skill.linalg import gaussian_posterior_split
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.state import Estimate, EvaluatorState

__all__ = ["Solved", "solve_deliberation"]

_LOG_ARBITRARY = math.log(0.1)
"""The log density of a score that is arbitrary: uniform on 0-10."""


@dataclass(frozen=True, slots=True)
class Solved:
    """Each author's (mean, variance, scores received); each evaluator's new record."""

    authors: dict[str, tuple[float, float, int]]
    evaluators: dict[str, EvaluatorState]
    level: tuple[float, float]  # the shift of the task type's level: mean, variance
    offsets: list[tuple[float, float]]  # each round's offset: mean, variance
    leniencies: list[tuple[float, float]]  # each evaluator's honesty and leniency


@dataclass(slots=True)
class _Layout:
    """The unknowns (authors, then evaluators, then rounds, then the level) with their
        priors, and the scores as parallel lists: the indices of each score's author,
        evaluator (-1 for an aggregated score) and round, its value relative to the level,
        its noise variance and its evaluator's position (-1 for an aggregated score). A score at
    0 or 10 is censored: it enters as its expected uncensored value, with more noise."""

    authors: list[str]
    evaluators: list[str]
    mean: list[float]
    var: list[float]
    author: list[int] = field(default_factory=list)
    evaluator: list[int] = field(default_factory=list)
    round: list[int] = field(default_factory=list)
    value: list[float] = field(default_factory=list)
    noise: list[float] = field(default_factory=list)

    @property
    def level(self) -> int:
        """The index of the level's shift: the last unknown."""
        return len(self.mean) - 1


@dataclass(slots=True)
class _Fit:
    """The posterior of one pass and what its residuals say."""

    mean: list[float]
    cov: list[list[float]]
    robust: list[float] = field(default_factory=list)
    residual: list[float] = field(default_factory=list)
    spread: list[float] = field(default_factory=list)  # variance of the fitted value
    honesty: list[float] = field(default_factory=list)  # per evaluator: log LR


def _sigmoid(x: float) -> float:
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _layout(
    evidence: DeliberationEvidence,
    priors: Mapping[str, Estimate],
    records: Mapping[str, EvaluatorState],
    level: tuple[float, float],
    offset_var: float,
    rules: SkillRules,
) -> _Layout:
    """The unknowns and scores of one deliberation."""
    evaluations, aggregated = evidence.evaluations, evidence.aggregated
    authors = sorted({ev.author for ev in evaluations} | {rs.author for rs in aggregated})
    evaluators = sorted({ev.evaluator for ev in evaluations})
    rounds = sorted({ev.round for ev in evaluations} | {rs.round for rs in aggregated})
    heads = len(authors)
    a_at = {a: i for i, a in enumerate(authors)}
    e_at = {e: heads + i for i, e in enumerate(evaluators)}
    r_at = {r: heads + len(evaluators) + i for i, r in enumerate(rounds)}
    size = heads + len(evaluators) + len(rounds) + 1
    mean = [0.0] * size
    var = [offset_var] * size
    var[-1] = level[1] if level[1] > 0.0 else rules.prior_var
    for a, i in a_at.items():
        mean[i], var[i] = priors[a].mean, priors[a].var
    for e, i in e_at.items():
        mean[i], var[i] = records[e].bias_mean, records[e].bias_var
    noise = {e: records[e].noise_var(rules) for e in evaluators}
    base = level[0]
    out = _Layout(authors, evaluators, mean, var)
    for ev in evaluations:
        ia, ie = a_at[ev.author], e_at[ev.evaluator]
        out.author.append(ia)
        out.evaluator.append(ie)
        out.round.append(r_at[ev.round])
        value, extra = ev.score, 0.0
        if ev.score <= 0.0 or ev.score >= 10.0:  # at the scale's end: censored
            expected = base + mean[ia] + mean[ie]
            spread = noise[ev.evaluator] + var[ia] + var[ie] + offset_var + var[-1]
            value, extra = censored(ev.score, expected, spread)
        out.value.append(value - base)
        out.noise.append(noise[ev.evaluator] + extra)
    aggregate = rules.aggregate_noise_sd**2
    for rs in aggregated:
        out.author.append(a_at[rs.author])
        out.evaluator.append(-1)
        out.round.append(r_at[rs.round])
        out.value.append(rs.score - base)
        out.noise.append(aggregate)
    return out


def censored(score: float, expected: float, spread: float) -> tuple[float, float]:
    """A score at 0 or 10 says "this or beyond": what the priors expect of the uncensored
    score given that (the truncated normal's mean), and the extra variance of that guess
    (one step of the Tobit model's EM)."""
    sd = math.sqrt(spread)
    sign = 1.0 if score >= 10.0 else -1.0
    z = sign * (score - expected) / sd  # standardized distance past the bound
    ratio = _inverse_mills(z)
    value = expected + sign * sd * ratio
    shrink = max(0.0, 1.0 - ratio * (ratio - z))
    value = max(score, value) if sign > 0 else min(score, value)
    return value, spread * shrink


def _inverse_mills(z: float) -> float:
    """φ(z) / (1 - Φ(z)): the mean of a standard normal beyond z, stable in the tail."""
    if z > 30.0:
        return z
    tail = 0.5 * math.erfc(z / math.sqrt(2.0))
    return math.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi) / tail


def _precision(
    lay: _Layout, weights: list[float], centre: list[float], leniency_var: float
) -> tuple[list[list[float]], list[float]]:
    """The posterior's precision matrix and precision-times-mean vector. ``centre``
    weighs the evaluators (in order) whose leniencies average to about zero: the mean of
    n honest leniencies of spread ``leniency_var`` is 0 give or take its variance over n
    (the scale is the average honest evaluator's)."""
    size = len(lay.mean)
    lv = size - 1
    precision = [[0.0] * size for _ in range(size)]
    shift = [0.0] * size
    for i in range(size):
        precision[i][i] = 1.0 / lay.var[i]
        shift[i] = lay.mean[i] / lay.var[i]
    pl = precision[lv]
    for a, e, r, y, w in zip(lay.author, lay.evaluator, lay.round, lay.value, weights, strict=True):
        wy = w * y
        pa, pr = precision[a], precision[r]
        shift[a] += wy
        shift[r] += wy
        shift[lv] += wy
        pa[a] += w
        pa[r] += w
        pa[lv] += w
        pr[a] += w
        pr[r] += w
        pr[lv] += w
        pl[a] += w
        pl[r] += w
        pl[lv] += w
        if e >= 0:
            pe = precision[e]
            shift[e] += wy
            pe[e] += w
            pe[a] += w
            pe[r] += w
            pe[lv] += w
            pa[e] += w
            pr[e] += w
            pl[e] += w
    total = 0.0
    for weight in centre:
        total += weight
    if total > 0.0:
        strength = 1.0 / (total * leniency_var)  # total / var, times the shares' 1 / total²
        first = len(lay.authors)
        for i, wi in enumerate(centre):
            row = precision[first + i]
            for j, wj in enumerate(centre):
                row[first + j] += strength * wi * wj
    return precision, shift


def _fit(
    lay: _Layout, weights: list[float], centre: list[float], leniency_var: float, df: float
) -> _Fit:
    """The posterior given each score's weight, and what its residuals say: each score's
    Student-t weight, and each evaluator's log likelihood ratio of honest (its scores as
    its record predicts, with its prior leniency, not the one fitted to these very scores,
    which would excuse anything) against arbitrary (uniform on 0-10)."""
    precision, shift = _precision(lay, weights, centre, leniency_var)
    mean, cov = gaussian_posterior_split(precision, shift, len(lay.authors))
    fit = _Fit(mean, cov, honesty=[0.0] * len(lay.evaluators))
    heads = len(lay.authors)
    lv = len(mean) - 1
    cl = cov[lv]
    level_mean, level_var = mean[lv], cl[lv]
    log_t0 = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    half = 0.5 * (df + 1.0)
    prior_mean, prior_var = lay.mean, lay.var
    robust, residuals, spreads, honesty = fit.robust, fit.residual, fit.spread, fit.honesty
    for a, e, r, y, noise in zip(
        lay.author, lay.evaluator, lay.round, lay.value, lay.noise, strict=True
    ):
        ca, cr = cov[a], cov[r]
        fitted = mean[a] + mean[r] + level_mean
        spread = ca[a] + cr[r] + level_var + 2.0 * (ca[r] + ca[lv] + cr[lv])
        if e >= 0:
            r_o = y - fitted - prior_mean[e]
            honest_var = noise + spread + prior_var[e]
            log_honest = log_t0 - half * math.log1p(r_o * r_o / honest_var / df)
            honesty[e - heads] += log_honest - 0.5 * math.log(honest_var) - _LOG_ARBITRARY
            ce = cov[e]
            fitted += mean[e]
            spread += ce[e] + 2.0 * (ce[a] + ce[r] + ce[lv])
        residual = y - fitted
        robust.append((df + 1.0) / (df + residual * residual / (noise + spread)))
        residuals.append(residual)
        spreads.append(spread)
    return fit


def solve_deliberation(
    evidence: DeliberationEvidence,
    priors: Mapping[str, Estimate],
    records: Mapping[str, EvaluatorState],
    level: tuple[float, float],
    spreads: tuple[float, float],
    rules: SkillRules,
) -> Solved:
    """The posterior of every author's quality and every evaluator's record, and of the
    level's shift and the round offsets."""
    lay = _layout(evidence, priors, records, level, spreads[0], rules)
    authors, evaluators = lay.authors, lay.evaluators
    heads = len(authors)
    prior_trust = [records[e].trust for e in evaluators]
    trust = prior_trust
    robust = [1.0] * len(lay.value)
    clip = rules.trust_clip
    fit = _Fit(lay.mean, [])
    for _ in range(rules.passes):
        honest = [_sigmoid(t) for t in trust]
        weights = [
            w / noise * (honest[e - heads] if e >= 0 else 1.0)
            for w, noise, e in zip(robust, lay.noise, lay.evaluator, strict=True)
        ]
        fit = _fit(lay, weights, honest, spreads[1], rules.robust_df)
        robust = fit.robust
        trust = [
            max(-clip, min(clip, t + said))
            for t, said in zip(prior_trust, fit.honesty, strict=True)
        ]
    return _solved(lay, fit, trust, records)


def _solved(
    lay: _Layout, fit: _Fit, trust: list[float], records: Mapping[str, EvaluatorState]
) -> Solved:
    """The fit turned into new estimates and records."""
    authors, evaluators = lay.authors, lay.evaluators
    heads = len(authors)
    counts = [0] * heads
    given = [0] * len(evaluators)
    squares = [0.0] * len(evaluators)
    for k, (a, e) in enumerate(zip(lay.author, lay.evaluator, strict=True)):
        counts[a] += 1
        if e >= 0:
            r = fit.residual[k]
            given[e - heads] += 1
            squares[e - heads] += fit.robust[k] * (r * r + fit.spread[k])
    mean, cov = fit.mean, fit.cov
    solved_evaluators = {}
    leniencies = []
    for k, name in enumerate(evaluators):
        i = heads + k
        record = records[name]
        honest = _sigmoid(trust[k])
        leniencies.append((honest, mean[i]))
        solved_evaluators[name] = EvaluatorState(
            bias_mean=mean[i],
            bias_var=cov[i][i],
            noise_shape=record.noise_shape + honest * given[k] / 2.0,
            noise_rate=record.noise_rate + honest * squares[k] / 2.0,
            trust=trust[k],
            n=record.n + given[k],
        )
    lv = lay.level
    solved_authors = {a: (mean[i], cov[i][i], counts[i]) for i, a in enumerate(authors)}
    offsets = [(mean[i], cov[i][i]) for i in range(heads + len(evaluators), lv)]
    return Solved(solved_authors, solved_evaluators, (mean[lv], cov[lv][lv]), offsets, leniencies)
