"""The scale's anchor: which sources say where the scale lies at each task type, how much
each weighs, and how sure that is (docs/skill.md, "The scale").

A shared leniency of every source cannot be seen in their scores, so at each task type the
fit holds one weighted average of the sources' leniencies there at exactly zero. The
weights decide whose scale the board is on:

- **By its scores, up to a cap.** A source weighs by how many scores it gave at the task
  type, times its honesty, so a crowd of throw-away names weighs what their few scores do
  (not by their precision: a source of constant scores learns the least noise there is,
  and weighed by it took the whole scale). Its scores count only up to the larger of
  ``anchor_scores`` and ``anchor_cap`` times the typical other source's (the median
  source of the other sources' scores): a thousand judgments under one new name weigh what
  three established sources' do, so volume does not buy the scale, and a judge that holds
  the scale against a few new sources of a score or two keeps it.
- **Agreeing sources.** A source whose leniency lies far from the others' weighs less, and
  nothing beyond ``anchor_reach`` robust sds of their median (Tukey's biweight: (1 - u²)²
  at u reaches, the robust sd the weighted median absolute deviation's): one loud source
  does not move the scale at all once it lies that far, however many scores it gave.
- **Reference judges.** Where a judge named in ``reference_judges`` has scored a task type,
  those judges alone hold the scale there.

The anchor's own uncertainty: where the scale is the average of a few sources' leniencies,
that average is itself a sample of the population of such sources, and the error it
carries is shared by every agent scored at the task type. Its variance is the sources'
spread of leniencies (weighted, with ``k - 1`` degrees of freedom for ``k`` effective
sources) over ``k``; with one source (or named reference judges) the scale is that
source's by definition, and adds nothing.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy.special import ndtr, stdtrit

from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.terms import Layout

__all__ = ["anchor_variance", "anchor_weights", "references"]

Floats = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]
PRIOR_SPREAD = 0.5
"""How far sources' leniencies spread (sd) before any is seen: judges of one rubric
typically differ by about half a point."""
PRIOR_DF = 2.0
"""What ``PRIOR_SPREAD`` is worth, in degrees of freedom of the sources' own spread."""
_MAD_SD = 1.482602218505602
"""A normal distribution's sd over its median absolute deviation."""


def references(sources: list[str], rules: SkillRules) -> Bools:
    """Per source: whether it is a judge named in ``reference_judges``."""
    named = {f"judge:{name}" for name in rules.reference_judges}
    return np.array([name in named for name in sources], dtype=bool)


def _weighted_median(values: Floats, weights: Floats) -> float:
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order])
    at = int(np.searchsorted(cumulative, cumulative[-1] / 2.0))
    return float(values[order][min(at, len(values) - 1)])


def anchor_weights(
    lay: Layout,
    honesty: Floats,
    counts: Floats,
    reference: Bools,
    lenient: Floats | None,
    rules: SkillRules,
) -> Floats:
    """Per (source, task type): its weight in the scale's anchor at that task type.
    ``honesty``: per source; ``counts``: its scores there; ``lenient``: each one's
    leniency there as the fit stands (the source's and the source-type's, summed), None
    before the first solve."""
    cap = np.maximum(rules.anchor_scores, rules.anchor_cap * _typical_other(lay, counts))
    base = honesty[lay.st_source] * np.minimum(counts, cap)
    if reference.any():
        held = np.bincount(lay.st_type, weights=(reference[lay.st_source] & (counts > 0)),
                           minlength=lay.types) > 0  # fmt: skip
        base = np.where(held[lay.st_type] & ~reference[lay.st_source], 0.0, base)
    if lenient is None:
        return base
    out = base.copy()
    for t in range(lay.types):
        here = np.flatnonzero((lay.st_type == t) & (base > 0.0))
        d = lenient[here]
        centre, reach = _reach(d, base[here], rules)
        far = np.abs(d - centre) / reach
        out[here] = base[here] * np.where(far < 1.0, (1.0 - far * far) ** 2, 0.0)
    return out


def _reach(d: Floats, w: Floats, rules: SkillRules) -> tuple[float, float]:
    """The robust centre of leniencies ``d`` (weights ``w``) and the distance beyond which a
    source weighs nothing: ``anchor_reach`` robust sds (the weighted median absolute
    deviation's); unbounded with fewer than three sources (two cannot say which of them
    is the far one)."""
    if len(d) < 3:
        return 0.0, np.inf
    centre = _weighted_median(d, w)
    spread = _MAD_SD * _weighted_median(np.abs(d - centre), w)
    return centre, rules.anchor_reach * max(spread, rules.min_noise_sd)


def _typical_other(lay: Layout, counts: Floats) -> Floats:
    """Per (source, task type): the median, weighted by scores, of the other sources'
    counts at its task type (the source of a typical other score); 0 with no other."""
    out = np.zeros(len(counts))
    order = np.lexsort((counts, lay.st_type))
    types = lay.st_type[order]
    starts = np.searchsorted(types, np.arange(lay.types))
    ends = np.searchsorted(types, np.arange(lay.types), side="right")
    for t in range(lay.types):
        here = order[starts[t] : ends[t]]
        k = len(here)
        if k < 2:
            continue
        value = counts[here]
        cumulative = np.cumsum(value)
        own = np.arange(k)
        half = (cumulative[-1] - value) / 2.0
        before = np.searchsorted(cumulative, half)
        after = np.maximum(np.searchsorted(cumulative, half + value), own + 1)
        at = np.where(before < own, before, np.minimum(after, k - 1))
        at = np.where(at == own, np.where(own > 0, own - 1, np.minimum(own + 1, k - 1)), at)
        out[here] = value[at]
    return out


def anchor_variance(
    lay: Layout, anchor: Floats, lenient: Floats, lenient_var: Floats, reference: Bools,
    rules: SkillRules,
) -> Floats:  # fmt: skip
    """Per task type: the variance of the anchor's weighted average of leniencies as an
    estimate of the population's (0 with one effective source or reference judges).

    ``k``: the effective number of sources (their weights' squared sum over their sum of
    squares). The sources' spread: that of their leniencies' posteriors (means and
    variances: the means alone are shrunk; a source past the reach taken at it), over
    ``k - 1`` degrees of freedom (at most doubled), pooled with a prior spread of
    ``PRIOR_SPREAD`` worth ``PRIOR_DF`` degrees of freedom (two judges alone do not
    say how far judges differ: their two leniencies, 2 points apart, made every interval
    +-4 with Student's t on one degree); the variance is that spread over ``k``, widened so
    that ``interval_z`` of it is Student's t quantile with the pooled degrees of freedom.
    Below two effective sources it fades to 0 with ``k - 1``: one source holds the scale
    by definition, and a judge beside a score or two of new sources still does."""
    out = np.zeros(lay.types)
    for t in range(lay.types):
        here = np.flatnonzero((lay.st_type == t) & (anchor > 0.0))
        if len(here) < 2 or reference[lay.st_source[here]].any():
            continue
        w = anchor[here]
        total, squares = float(w.sum()), float((w * w).sum())
        k = total * total / squares
        if k <= 1.0 + 1e-9:
            continue
        d = lenient[here]
        centre = float(w @ d) / total
        robust, reach = _reach(d, w, rules)  # a source past the reach counts as at it
        d = np.clip(d, robust - reach, robust + reach)
        spread = float(w @ ((d - centre) ** 2 + lenient_var[here])) / total
        spread *= min(k / (k - 1.0), 2.0)  # k - 1 degrees of freedom (a source or two: 1)
        prior, seen = PRIOR_DF, k - 1.0
        spread = (prior * PRIOR_SPREAD**2 + seen * spread) / (prior + seen)
        z = rules.interval_z
        widen = (float(stdtrit(prior + seen, float(ndtr(z)))) / z) ** 2  # Student t quantile
        out[t] = spread / k * widen * min(1.0, k - 1.0)
    return out
