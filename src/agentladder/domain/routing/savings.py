"""Does routing pay? What routed gateway answers cost and how good they were judged,
against always using the best single agent (the routing's reference), per task type and
overall, with 95% bootstrap intervals (docs/routing.md, "Does routing pay?"). Pure: the
answers in, the figures out; numpy for the resamples.

Per routed answer i: its cost ``c_i`` (its tokens at its agent's declared prices, and
what classifying the request cost when ``gateway.classify``'s agent was asked: routing's
own cost, which always using the reference would not have paid), the reference's ``r_i``
(the same tokens at the reference's prices). The **cost ratio** is ``sum c / sum r``:
what routing cost for what always using the reference would have cost for the same
requests (the reference's own answers would have had other output tokens: the same tokens
are the estimate).

**Quality**, on the judged answers only: each judgment's score less its source's
leniency at the task type as the last fit learned it (``Judged``: a check's judge, a
caller's feedback), so that it reads on the skill's scale (the score an average honest
source would give: docs/skill.md); an answer judged twice counts the mean of the two.
That is ``y_i``; the reference's quality ``q_i`` is its skill at the task type when the
request was routed (``reference_skill``, the estimate routing chose against). The
**quality ratio** is ``mean y / mean q``. An answer by the reference itself counts
``q_i = y_i`` and its own answer's cost as ``r_i``: ratio 1 for both, as part of the
traffic (but for its classification's cost, when it had one).

**Intervals**: ``resamples`` bootstrap resamples of the requests (with replacement, as
many as there are), seeded: the same answers and seed give the same figures. The cost
resamples every request of the group, the quality its judged ones; in each quality
resample the uncertain parts are drawn too: one standard normal per source of scores
(its leniency: mean + z x sd, shared by all its scores) and one per reference agent at
the task type (its skill: skill + z x sd, shared by all its requests). The interval is
the 2.5th to 97.5th percentile of the resampled ratios, widened to hold the point where
a skewed resample puts it just outside. Each group draws from its own generator (the
seed and the group's name), so a task type's figures do not depend on the others.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field
from scipy import sparse

__all__ = [
    "RESAMPLES",
    "AgentCount",
    "CostSavings",
    "Judged",
    "QualitySavings",
    "RoutedAnswer",
    "Savings",
    "SavingsGroup",
    "savings",
]

RESAMPLES = 1000
"""Bootstrap resamples by default."""
CELLS = 1 << 21
"""The most request draws held at once (resamples x requests): about 16 MB of indices."""
NOT_JUDGED = "no routed answer here was judged (by a gateway check or a caller's feedback)"
NO_PRICES = "the reference agents declared no prices: the same tokens cost them nothing"
NO_SKILL = "the reference agents' skill is 0 here: no ratio to it"
Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Judged:
    """One judgment of an answer: its source (``judge:<name>``), its score (0-10), and
    the source's leniency at the task type as last fitted (0 and 0: a source the fit has
    not seen yet, as its prior)."""

    source: str
    score: float
    leniency: float = 0.0
    leniency_sd: float = 0.0


@dataclass(frozen=True, slots=True)
class RoutedAnswer:
    """One routed gateway answer, as its record and judgments give it."""

    task_type: str | None
    agent_id: str
    reference_agent: str
    cost_usd: float
    reference_cost_usd: float
    reference_skill: float
    reference_sd: float
    quality_floor: float | None = None
    classifier_usd: float = 0.0
    judged: tuple[Judged, ...] = ()

    @property
    def by_reference(self) -> bool:
        """Routing chose the reference itself."""
        return self.agent_id == self.reference_agent


class AgentCount(BaseModel):
    """An agent and how many requests it stands for."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent_id: str
    requests: int


class CostSavings(BaseModel):
    """What the routed answers cost against the reference's prices for the same tokens."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    routed_usd: float = Field(description="the answers' cost and classifier_usd")
    classifier_usd: float = Field(
        description="of routed_usd: classifying requests that named no task type"
        " (gateway.classify's agent)"
    )
    reference_usd: float
    saved_usd: float = Field(description="reference_usd - routed_usd")
    ratio: float | None = Field(description="routed_usd / reference_usd; null: see reason")
    low: float | None = Field(description="the ratio's 95% interval (bootstrap)")
    high: float | None
    reason: str | None = Field(default=None, description="why there is no ratio")


class QualitySavings(BaseModel):
    """The judged routed answers' quality against the reference's."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    judged: int = Field(description="the routed answers judged (a check, feedback, or both)")
    mean_score: float | None = Field(description="their judges' scores as given (0-10)")
    routed: float | None = Field(
        description="the same less each source's leniency: on the skill's scale"
    )
    reference: float | None = Field(
        description="the reference's skill for the same requests (its own answer's when"
        " it answered)"
    )
    ratio: float | None = Field(description="routed / reference; null: see reason")
    low: float | None = Field(description="the ratio's 95% interval (bootstrap)")
    high: float | None
    reason: str | None = Field(default=None, description="why there is no ratio")


class SavingsGroup(BaseModel):
    """One task type's routed answers (``task_type`` null: those routed without one), or
    all of them (``Savings.overall``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task_type: str | None
    requests: int = Field(description="routed answers")
    by_reference: int = Field(description="of them answered by the reference itself")
    answered_by: list[AgentCount] = Field(description="the agents that answered, most first")
    references: list[AgentCount] = Field(description="the references, most first")
    floor_low: float | None = Field(description="cheapest_above: the lowest floor applied")
    floor_high: float | None = Field(description="cheapest_above: the highest floor applied")
    cost: CostSavings
    quality: QualitySavings


class Savings(BaseModel):
    """Per task type (by requests, most first) and overall; ``overall`` null and no task
    type when there was no routed answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    overall: SavingsGroup | None
    task_types: list[SavingsGroup]
    resamples: int
    seed: int


def _counts(names: Sequence[str]) -> list[AgentCount]:
    counted: dict[str, int] = {}
    for name in names:
        counted[name] = counted.get(name, 0) + 1
    ranked = sorted(counted.items(), key=lambda item: (-item[1], item[0]))
    return [AgentCount(agent_id=name, requests=n) for name, n in ranked]


def _codes(keys: Sequence[object]) -> tuple[Ints, int]:
    """Each key's index among the distinct keys (in order of appearance), and their count."""
    index: dict[object, int] = {}
    codes = np.array([index.setdefault(key, len(index)) for key in keys], dtype=np.int64)
    return codes, len(index)


def _interval(point: float, ratios: Floats) -> tuple[float | None, float | None]:
    """The 2.5th and 97.5th percentiles of the finite ``ratios``, widened to ``point``."""
    finite = ratios[np.isfinite(ratios)]
    if finite.size == 0:
        return None, None
    low, high = np.percentile(finite, [2.5, 97.5])
    return min(float(low), point), max(float(high), point)


def _resampled(
    rng: np.random.Generator, n: int, resamples: int, ratio: Callable[[Floats], Floats]
) -> Floats:
    """``ratio(counts)`` over ``resamples`` resamples of ``n`` requests, a chunk of resamples
    at a time (``CELLS`` draws at most): ``counts[b, i]``, how many times resample ``b``
    drew request ``i`` (every figure is a sum over the requests drawn, so a product with
    the counts: no gather of the resampled values)."""
    chunk = max(1, CELLS // max(n, 1))
    out = []
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        drawn = rng.integers(0, n, size=(size, n), dtype=np.int32)  # size * n <= CELLS
        drawn += (np.arange(size, dtype=np.int32) * n)[:, None]
        counts = np.bincount(drawn.ravel(), minlength=size * n).reshape(size, n)
        out.append(ratio(counts.astype(np.float64)))
    return np.concatenate(out) if out else np.empty(0)


def _ratios(over: Floats, under: Floats) -> Floats:
    """``over / under``, NaN where ``under`` is not positive (a resample with nothing to
    compare with)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(under > 0, over / under, np.nan)


def _cost(answers: Sequence[RoutedAnswer], rng: np.random.Generator, resamples: int) -> CostSavings:
    cost = np.array([a.cost_usd + a.classifier_usd for a in answers])
    reference = np.array([a.reference_cost_usd if not a.by_reference else a.cost_usd
                          for a in answers])  # fmt: skip
    routed_usd, reference_usd = float(cost.sum()), float(reference.sum())
    figures = {"routed_usd": routed_usd, "reference_usd": reference_usd,
               "saved_usd": reference_usd - routed_usd,
               "classifier_usd": float(sum(a.classifier_usd for a in answers))}  # fmt: skip
    if reference_usd <= 0:
        return CostSavings(**figures, ratio=None, low=None, high=None, reason=NO_PRICES)
    point = routed_usd / reference_usd
    ratios = _resampled(rng, len(answers), resamples, lambda c: _ratios(c @ cost, c @ reference))
    low, high = _interval(point, ratios)
    return CostSavings(**figures, ratio=point, low=low, high=high)


def _by_code(n: int, rows: Ints, codes: Ints, values: Floats, width: int) -> sparse.csr_matrix:
    """The n x width matrix of ``values`` at (``rows``, ``codes``), repeats summed."""
    return sparse.csr_matrix((values, (rows, codes)), shape=(n, max(width, 1)))


def _quality(
    answers: Sequence[RoutedAnswer], rng: np.random.Generator, resamples: int
) -> QualitySavings:
    judged = [a for a in answers if a.judged]
    if not judged:
        return QualitySavings(judged=0, mean_score=None, routed=None, reference=None,
                              ratio=None, low=None, high=None, reason=NOT_JUDGED)  # fmt: skip
    n = len(judged)
    raw = np.array([sum(j.score for j in a.judged) / len(a.judged) for a in judged])
    y = np.array([sum(j.score - j.leniency for j in a.judged) / len(a.judged) for a in judged])
    own = np.array([a.by_reference for a in judged])
    q = np.where(own, y, np.array([a.reference_skill for a in judged]))
    refs, n_refs = _codes([(a.reference_agent, a.task_type) for a in judged])
    sources, n_sources = _codes([j.source for a in judged for j in a.judged])
    rows = np.array([i for i, a in enumerate(judged) for _ in a.judged], dtype=np.int64)
    # a judgment's leniency sd over its answer's judgments, by source: one draw of a source
    # moves each answer's y by its column of this times the draw
    coef = np.array([j.leniency_sd / len(a.judged) for a in judged for j in a.judged])
    lenient = _by_code(n, rows, sources, coef, n_sources)
    lenient_own = _by_code(n, rows, sources, coef * own[rows], n_sources)
    q_sd = np.array([0.0 if a.by_reference else a.reference_sd for a in judged])
    skilled = _by_code(n, np.arange(n), refs, q_sd, n_refs)
    figures = {"judged": n, "mean_score": float(raw.mean()), "routed": float(y.mean()),
               "reference": float(q.mean())}  # fmt: skip
    if q.sum() <= 0:
        return QualitySavings(**figures, ratio=None, low=None, high=None, reason=NO_SKILL)
    point = float(y.sum() / q.sum())

    def ratio(counts: Floats) -> Floats:
        size = counts.shape[0]
        z_source = rng.standard_normal((size, max(n_sources, 1)))
        z_skill = rng.standard_normal((size, max(n_refs, 1)))
        shift = ((lenient.T @ counts.T).T * z_source).sum(axis=1)
        shift_own = ((lenient_own.T @ counts.T).T * z_source).sum(axis=1)
        spread = ((skilled.T @ counts.T).T * z_skill).sum(axis=1)
        # an answer by the reference counts its own (drawn) score on both sides
        return _ratios(counts @ y - shift, counts @ q - shift_own + spread)

    low, high = _interval(point, _resampled(rng, n, resamples, ratio))
    return QualitySavings(**figures, ratio=point, low=low, high=high)


def _generator(seed: int, name: str) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def _group(
    task_type: str | None, name: str, answers: Sequence[RoutedAnswer], resamples: int, seed: int
) -> SavingsGroup:
    rng = _generator(seed, name)
    floors = [a.quality_floor for a in answers if a.quality_floor is not None]
    return SavingsGroup(
        task_type=task_type, requests=len(answers),
        by_reference=sum(a.by_reference for a in answers),
        answered_by=_counts([a.agent_id for a in answers]),
        references=_counts([a.reference_agent for a in answers]),
        floor_low=min(floors) if floors else None, floor_high=max(floors) if floors else None,
        cost=_cost(answers, rng, resamples), quality=_quality(answers, rng, resamples),
    )  # fmt: skip


def savings(
    answers: Sequence[RoutedAnswer], *, resamples: int = RESAMPLES, seed: int = 0
) -> Savings:
    """Cost and quality of ``answers`` against their references, per task type (most
    requests first, then by name) and overall; see the module."""
    if resamples < 1:
        raise ValueError(f"resamples: {resamples} must be 1 or more")
    for a in answers:
        values = (a.cost_usd, a.reference_cost_usd, a.reference_skill, a.reference_sd,
                  a.classifier_usd)  # fmt: skip
        if not all(math.isfinite(v) and v >= 0 for v in values):
            raise ValueError(f"an answer's costs, skill and sd must be finite, 0 or more: {a}")
    if not answers:
        return Savings(overall=None, task_types=[], resamples=resamples, seed=seed)
    by_type: dict[str | None, list[RoutedAnswer]] = {}
    for a in answers:
        by_type.setdefault(a.task_type, []).append(a)
    order = sorted(by_type, key=lambda t: (-len(by_type[t]), t is None, t or ""))
    groups = [
        _group(t, f"type:{t}" if t is not None else "untyped", by_type[t], resamples, seed)
        for t in order
    ]
    overall = _group(None, "overall", answers, resamples, seed)
    return Savings(overall=overall, task_types=groups, resamples=resamples, seed=seed)
