"""Does routing pay: the pure savings of routed answers against their references, known
inputs to known ratios, intervals, seeds and the empty cases."""

from __future__ import annotations

import math
import random
from dataclasses import replace

import numpy as np
import pytest

from agentladder.domain.routing.savings import (
    NO_PRICES,
    NOT_JUDGED,
    Judged,
    RoutedAnswer,
    savings,
)

JUDGE = "judge:gateway-judge:j"


def answer(
    agent: str, cost: float, reference_cost: float, *scores: float, task_type: str = "audit",
    skill: float = 8.0, sd: float = 0.0, leniency: float = 1.0, leniency_sd: float = 0.0,
    floor: float | None = None,
) -> RoutedAnswer:  # fmt: skip
    """An answer by ``agent`` whose reference is ``ref``, judged by JUDGE with ``scores``."""
    judged = tuple(Judged(JUDGE, s, leniency, leniency_sd) for s in scores)
    return RoutedAnswer(
        task_type=task_type, agent_id=agent, reference_agent="ref", cost_usd=cost,
        reference_cost_usd=reference_cost, reference_skill=skill, reference_sd=sd,
        quality_floor=floor, judged=judged,
    )  # fmt: skip


KNOWN = [
    answer("cheap", 1.0, 4.0, 7.0, floor=7.5),
    answer("cheap", 1.0, 4.0, 9.0, floor=7.6),
    answer("cheap", 1.0, 4.0),  # not judged
    answer("ref", 4.0, 4.0, 9.0),  # the reference itself
]


def test_known_answers_give_known_ratios() -> None:
    """Cost 7 against 16; on the judged ones, scores less the judge's leniency of 1 read
    6, 8 and 8 against the reference's skill 8, 8 and (its own answer) 8: 22/24."""
    found = savings(KNOWN, seed=1)
    assert found.overall is not None
    assert [g.task_type for g in found.task_types] == ["audit"]
    group = found.task_types[0]
    assert (group.requests, group.by_reference, group.quality.judged) == (4, 1, 3)
    assert [(a.agent_id, a.requests) for a in group.answered_by] == [("cheap", 3), ("ref", 1)]
    assert [(a.agent_id, a.requests) for a in group.references] == [("ref", 4)]
    assert (group.floor_low, group.floor_high) == (7.5, 7.6)
    cost = group.cost
    assert (cost.routed_usd, cost.reference_usd, cost.saved_usd) == (7.0, 16.0, 9.0)
    assert cost.ratio == pytest.approx(7 / 16)
    quality = group.quality
    assert quality.mean_score == pytest.approx(25 / 3)
    assert quality.routed == pytest.approx(22 / 3)
    assert quality.reference == pytest.approx(8.0)
    assert quality.ratio == pytest.approx(22 / 24)
    assert found.overall.cost == cost  # one task type: overall is the same requests...
    assert found.overall.quality.ratio == quality.ratio  # ...drawn by another generator
    assert found.overall.task_type is None


def test_intervals_hold_the_point_and_a_seed_repeats_them() -> None:
    """Every interval holds its point; the same seed gives the same figures, another seed
    other intervals around the same points."""
    rng = random.Random(7)
    answers = [
        answer("cheap" if rng.random() < 0.7 else "ref", rng.uniform(0.5, 2), rng.uniform(2, 5),
               *([rng.uniform(4, 10)] if rng.random() < 0.5 else []),
               task_type=rng.choice(["audit", "code", "ops"]), sd=0.3, leniency_sd=0.2)
        for _ in range(300)
    ]  # fmt: skip
    first = savings(answers, seed=11)
    assert first == savings(answers, seed=11)
    other = savings(answers, seed=12)
    assert other != first
    assert first.overall is not None
    for group in [first.overall, *first.task_types]:
        for figures in (group.cost, group.quality):
            assert figures.ratio is not None
            assert figures.low is not None
            assert figures.high is not None
            assert figures.low <= figures.ratio <= figures.high
            assert figures.low < figures.high
    assert other.overall is not None
    assert other.overall.cost.ratio == first.overall.cost.ratio
    assert other.overall.cost.low != first.overall.cost.low


def test_a_task_types_figures_do_not_depend_on_the_others() -> None:
    """audit's group is the same with or without another task type's answers beside it."""
    alone = savings(KNOWN, seed=3).task_types
    more = [*KNOWN, *(answer("cheap", 2.0, 3.0, 5.0, task_type="code") for _ in range(5))]
    with_code = savings(more, seed=3).task_types
    assert [g.task_type for g in with_code] == ["code", "audit"]  # most requests first
    assert with_code[1] == alone[0]


def test_no_routed_answer_is_empty_and_no_judged_one_has_no_quality() -> None:
    """Nothing routed: no overall and no task type. Routed but never judged: the cost is
    there, the quality null with the reason."""
    empty = savings([], seed=0)
    assert (empty.overall, empty.task_types) == (None, [])
    unjudged = savings([answer("cheap", 1.0, 2.0), answer("cheap", 1.0, 2.0)], seed=0)
    assert unjudged.overall is not None
    quality = unjudged.overall.quality
    assert (quality.judged, quality.ratio, quality.low, quality.high) == (0, None, None, None)
    assert quality.reason == NOT_JUDGED
    assert unjudged.overall.cost.ratio == pytest.approx(0.5)
    assert (unjudged.overall.cost.low, unjudged.overall.cost.high) == (0.5, 0.5)


def test_the_reference_itself_counts_at_one_for_both() -> None:
    """Every request answered by its reference: both ratios 1, intervals [1, 1], whatever
    the reference's own skill estimate says."""
    answers = [answer("ref", 3.0, 3.0, 6.0, skill=9.0, sd=1.0) for _ in range(20)]
    group = savings(answers, seed=5).overall
    assert group is not None
    assert group.by_reference == 20
    assert (group.cost.ratio, group.cost.low, group.cost.high) == (1.0, 1.0, 1.0)
    assert group.quality.ratio == pytest.approx(1.0)
    assert group.quality.low == pytest.approx(1.0)
    assert group.quality.high == pytest.approx(1.0)


def test_classifying_is_routings_own_cost() -> None:
    """A request classified by gateway.classify's agent costs its answer and its
    classification; by the reference itself too (then its cost ratio is over 1)."""
    classified = RoutedAnswer(
        task_type="audit", agent_id="cheap", reference_agent="ref", cost_usd=1.0,
        reference_cost_usd=4.0, reference_skill=8.0, reference_sd=0.0, classifier_usd=0.5,
    )  # fmt: skip
    found = savings([classified, answer("ref", 4.0, 4.0)], seed=0).overall
    assert found is not None
    assert (found.cost.routed_usd, found.cost.classifier_usd) == (5.5, 0.5)
    assert found.cost.ratio == pytest.approx(5.5 / 8)
    own = savings([replace(classified, agent_id="ref", cost_usd=4.0)], seed=0).overall
    assert own is not None
    assert own.cost.ratio == pytest.approx(4.5 / 4)


def test_references_without_prices_give_no_cost_ratio() -> None:
    """A reference that declared no prices costs 0 for any tokens: no ratio, the reason."""
    group = savings([answer("cheap", 1.0, 0.0, 8.0)], seed=0).overall
    assert group is not None
    assert (group.cost.ratio, group.cost.reason) == (None, NO_PRICES)
    assert group.cost.saved_usd == -1.0
    assert group.quality.ratio is not None


def test_the_uncertain_parts_widen_the_quality_interval() -> None:
    """The same scores, with the reference's skill and the judge's leniency uncertain,
    give a wider quality interval with the same seed (the point is the same)."""

    def quality(sd: float, leniency_sd: float) -> tuple[float, float, float]:
        answers = [
            answer("cheap", 1.0, 2.0, 6.0 + (i % 5) * 0.5, sd=sd, leniency_sd=leniency_sd)
            for i in range(100)
        ]
        group = savings(answers, seed=9).overall
        assert group is not None
        q = group.quality
        assert q.ratio is not None
        assert q.low is not None
        assert q.high is not None
        return q.ratio, q.low, q.high

    point, low, high = quality(0.0, 0.0)
    wider = quality(0.5, 0.0)
    widest = quality(0.5, 0.5)
    assert wider[0] == point == widest[0]
    assert wider[2] - wider[1] > 2 * (high - low)
    assert widest[2] - widest[1] > wider[2] - wider[1]
    # the reference's sd of 0.5 on a skill of 8: about 0.0625 of the ratio's sd
    assert (wider[2] - wider[1]) / (2 * 1.96) == pytest.approx(point * 0.5 / 8, rel=0.25)


def test_the_cost_interval_matches_the_delta_method_on_a_large_sample() -> None:
    """2,000 answers of random costs: the bootstrap's 95% interval of the ratio of sums is
    about the delta method's 1.96 standard errors either side."""
    rng = np.random.default_rng(4)
    cost = rng.uniform(0.2, 1.8, 2000)
    reference = rng.uniform(1.0, 3.0, 2000)
    answers = [answer("cheap", float(c), float(r)) for c, r in zip(cost, reference, strict=True)]
    group = savings(answers, seed=2).overall
    assert group is not None
    ratio = cost.sum() / reference.sum()
    residual = cost - ratio * reference
    se = math.sqrt(np.var(residual) / len(cost)) / reference.mean()
    assert group.cost.ratio == pytest.approx(ratio)
    assert group.cost.low is not None
    assert group.cost.high is not None
    assert (group.cost.high - group.cost.low) / 2 == pytest.approx(1.96 * se, rel=0.15)


def test_bad_figures_are_refused_naming_them() -> None:
    """A negative cost or no resample is a one-line ValueError naming what is wrong."""
    with pytest.raises(ValueError, match="resamples: 0"):
        savings(KNOWN, resamples=0)
    with pytest.raises(ValueError, match="costs, skill and sd"):
        savings([answer("cheap", -1.0, 2.0)])
