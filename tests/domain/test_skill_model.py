"""The evidence model: known qualities recovered, leniency and collusion resisted, pooling,
widening, and evidence refused with the field named."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from agentladder.domain.skill import (
    DeliberationEvidence,
    Evaluation,
    FleetSkill,
    ModelChange,
    ScoreEvidence,
    SkillRules,
    VerdictEvidence,
    apply_evidence,
    skill_board,
    skill_view,
)
from agentladder.domain.skill.state import new_skill
from agentladder.errors import InvalidInput
from tests.domain.skill_helpers import colluding, deliberations, fold, honest

RULES = SkillRules()
NOW = 1_000_000.0 + 60.0 * 400


@settings(max_examples=12, deadline=None)
@given(
    qualities=st.lists(st.floats(2.0, 8.5), min_size=5, max_size=5),
    seed=st.integers(0, 10_000),
)
def test_known_qualities_are_recovered(qualities: list[float], seed: int) -> None:
    """After 150 deliberations every estimate is within 0.6 of the truth, and every pair
    of agents a whole point apart is in the right order."""
    truth = {f"a{i}": q for i, q in enumerate(qualities)}
    states, fleet = fold(deliberations(truth, 150, honest(0.5), seed=seed, size=4))
    views = {a: skill_view(states[a], fleet, "code_review", NOW, RULES) for a in truth}
    for agent, quality in truth.items():
        assert abs(views[agent].skill - quality) < 0.6, (agent, quality, views[agent])
    for a, qa in truth.items():
        for b, qb in truth.items():
            if qa - qb >= 1.0:
                assert views[a].skill > views[b].skill


def test_the_intervals_cover_the_truth_and_narrow_with_evidence() -> None:
    """With more deliberations the sd shrinks, and the 95% intervals hold the true values."""
    truth = {"a": 3.0, "b": 4.5, "c": 6.0, "d": 7.0, "e": 8.0}
    events = deliberations(truth, 200, honest(0.8), seed=3, size=4)
    early, fleet_early = fold(events[:20])
    late, fleet = fold(events)
    for agent, quality in truth.items():
        first = skill_view(early[agent], fleet_early, "code_review", NOW, RULES)
        last = skill_view(late[agent], fleet, "code_review", NOW, RULES)
        assert last.sd < first.sd
        assert last.low <= quality <= last.high, (agent, quality, last)


def test_leniency_is_separated_from_quality() -> None:
    """A lenient (+2) and a harsh (-2) evaluator leave the others' estimates where honest
    scoring puts them (within 0.15), and their leniencies are learned."""
    truth = {"a": 4.0, "b": 5.0, "c": 6.0, "d": 7.0, "e": 5.5}
    fair, fair_fleet = fold(deliberations(truth, 150, honest(0.5), seed=5))
    biased_scorer = honest(0.5, {"a": 2.0, "b": -2.0})
    biased, fleet = fold(deliberations(truth, 150, biased_scorer, seed=5))
    for agent in truth:
        plain = skill_view(fair[agent], fair_fleet, "code_review", NOW, RULES).skill
        with_bias = skill_view(biased[agent], fleet, "code_review", NOW, RULES).skill
        assert abs(plain - with_bias) < 0.15, (agent, plain, with_bias)
    assert biased["a"].evaluator.bias_mean - biased["b"].evaluator.bias_mean > 3.5


def test_two_colluders_among_five_move_no_estimate_by_half_an_sd() -> None:
    """Two evaluators that give each other 10 and everyone else 0 move neither their own
    estimate nor an honest agent's by more than half that agent's sd, against the same
    deliberations without the colluders' scores (what a perfect filter would leave), and
    they lose their honesty while the others keep theirs."""
    truth = {"a": 4.0, "b": 5.0, "c": 6.0, "d": 7.0, "e": 5.5}
    pair = {"a", "b"}
    scorer = honest(0.5)
    for seed in (1, 2, 9):
        rigged_events = deliberations(truth, 200, colluding(pair, scorer), seed=seed)
        filtered = [
            e.model_copy(
                update={"evaluations": tuple(v for v in e.evaluations if v.evaluator not in pair)}
            )
            for e in rigged_events
        ]
        clean, clean_fleet = fold(filtered)
        rigged, fleet = fold(rigged_events)
        for agent in truth:
            plain = skill_view(clean[agent], clean_fleet, "code_review", NOW, RULES)
            moved = skill_view(rigged[agent], fleet, "code_review", NOW, RULES)
            assert abs(moved.skill - plain.skill) <= 0.5 * plain.sd, (seed, agent, plain, moved)
        assert max(rigged[x].evaluator.honesty for x in pair) < 0.01
        assert min(rigged[x].evaluator.honesty for x in "cde") > 0.99


def test_a_new_task_type_starts_from_the_general_ability_with_wide_uncertainty() -> None:
    """An agent strong at code review reads, at a task type it never did, as predicted
    from its general ability (the type's level plus its ability, with the learned
    type_spread), with no observations: above a weak agent, far less sure than where it
    has evidence."""
    truth = {"a": 8.0, "b": 4.0, "c": 5.0, "d": 6.0}
    states, fleet = fold(deliberations(truth, 80, honest(0.5), seed=1))
    known = skill_view(states["a"], fleet, "code_review", NOW, RULES)
    new = skill_view(states["a"], fleet, "translate", NOW, RULES)
    assert new.observations == 0
    assert fleet.spreads is not None
    assert new.sd >= fleet.spreads.type_spread * 0.9
    assert new.sd > 3 * known.sd
    assert new.skill > skill_view(states["b"], fleet, "translate", NOW, RULES).skill


def test_inactivity_widens_the_uncertainty() -> None:
    """Thirty days without evidence add drift to the variance (the skill shown moves only
    by what the wider posterior's restriction to 0-10 moves it: here under 1e-4)."""
    states, fleet = fold(deliberations({"a": 6, "b": 5, "c": 4}, 40, honest(0.5)))
    soon = skill_view(states["a"], fleet, "code_review", NOW, RULES)
    later = skill_view(states["a"], fleet, "code_review", NOW + 30 * 86_400, RULES)
    assert later.sd > soon.sd
    assert later.skill == pytest.approx(soon.skill, abs=1e-4)


def test_a_model_change_widens_the_estimate_and_restarts_the_evaluator_record() -> None:
    """A new model behind the same name: every estimate less sure, honesty back to the prior."""
    states, fleet = fold(deliberations({"a": 6, "b": 5, "c": 4}, 40, honest(0.5)))
    before = states["a"].types["code_review"]
    change = ModelChange(key="model:a:1", at=NOW, agent_id="a", model_name="m2")
    after_state = apply_evidence(states, fleet, change, RULES).agents["a"]
    after = after_state.types["code_review"]
    days = (NOW - (before.at or NOW)) / 86_400
    drift = RULES.drift_sd_per_day**2 * days
    assert after.var == pytest.approx(before.var + drift + RULES.model_change_sd**2)
    assert after_state.evaluator.honesty == RULES.honesty_prior
    assert after_state.model_changes == 1
    assert skill_view(after_state, fleet, "code_review", NOW, RULES).provisional


def test_judgments_and_verdicts_move_the_estimate_their_way() -> None:
    """A high score raises the estimate, a low one lowers it; a failed verdict lowers it."""
    start = {"a": new_skill("a", RULES)}
    fleet = FleetSkill()
    high = ScoreEvidence(key="j1", at=NOW, agent_id="a", task_type="t", score=9.0)
    low = ScoreEvidence(key="j2", at=NOW, agent_id="a", task_type="t", score=1.0)
    failed = VerdictEvidence(key="v1", at=NOW, agent_id="a", task_type="t", passed=False)
    base = skill_view(start["a"], fleet, "t", NOW, RULES).skill
    for evidence, direction in ((high, 1), (low, -1), (failed, -1)):
        moved = apply_evidence(start, fleet, evidence, RULES).agents["a"]
        assert (skill_view(moved, fleet, "t", NOW, RULES).skill - base) * direction > 0


def test_the_board_is_in_tiers_and_marks_provisional_estimates() -> None:
    """Tier 1 holds the best agent and those the evidence does not separate from it; few
    observations: provisional."""
    truth = {"a": 8.0, "b": 7.9, "c": 3.0}
    states, fleet = fold(deliberations(truth, 60, honest(0.5), seed=2))
    board = skill_board(states.values(), fleet, "code_review", NOW, RULES)
    tiers = {e.agent_id: e.tier for e in board}
    assert tiers["a"] == tiers["b"] == 1
    assert tiers["c"] == 2
    assert [e.agent_id for e in board][-1] == "c"
    single = fold(deliberations(truth, 1, honest(0.5)))
    assert skill_view(single[0]["a"], single[1], "code_review", NOW, RULES).provisional


def test_a_score_outside_0_to_10_is_refused_naming_the_field() -> None:
    """Score 11: refused by validation, naming evaluations.0.score."""
    with pytest.raises(ValidationError) as caught:
        DeliberationEvidence(
            key="d", at=0.0, task_type="t", agents=("a", "b"),
            evaluations=({"evaluator": "a", "author": "b", "round": 1, "score": 11},),
        )  # fmt: skip
    assert "evaluations.0.score" in str(caught.value)


@pytest.mark.parametrize(
    ("evaluator", "author", "reason"),
    [("x", "b", "is not in the deliberation"), ("b", "b", "evaluates itself")],
)
def test_an_evaluator_outside_the_deliberation_or_of_itself_is_refused(
    evaluator: str, author: str, reason: str
) -> None:
    """An evaluator not in the deliberation, or an agent evaluating itself: refused."""
    with pytest.raises((InvalidInput, ValidationError)) as caught:
        DeliberationEvidence(
            key="d", at=0.0, task_type="t", agents=("a", "b"),
            evaluations=(Evaluation(evaluator=evaluator, author=author, round=1, score=5),),
        )  # fmt: skip
    assert "evaluations[0].evaluator" in str(caught.value)
    assert reason in str(caught.value)


def test_a_score_at_the_end_of_the_scale_counts_as_at_least_that() -> None:
    """A 10 from an evaluator expecting about 9.8 enters as clearly more than 10, with more
    noise; a 10 far above what anyone expects enters as barely more than 10."""
    from agentladder.domain.skill.gauss import censored

    value, extra = censored(10.0, 9.8, 0.5)
    assert value > 10.0
    assert extra > 0.0
    assert value > 10.3
    assert 10.0 <= censored(10.0, 3.0, 0.5)[0] < 10.1
    low, _ = censored(0.0, 0.3, 0.5)
    assert low < 0.0


def test_between_fits_overall_is_a_mean_of_the_types_never_surer_than_they_are() -> None:
    """Judged 8 at code then 6 at math, before any fit (the fleet knows no type yet): the
    overall lies between the two types' estimates, with an sd no smaller than the smaller
    of theirs (it read 7.86 [7.86-7.86], sd 0, above both types, counting each new type
    as the only one); a third score at code moves it by a half share of that type's move."""
    fleet = FleetSkill()
    state = {"a": new_skill("a", RULES)}
    for key, task_type, score in (("j1", "code", 8.0), ("j2", "math", 6.0)):
        evidence = ScoreEvidence(key=key, at=NOW, agent_id="a", task_type=task_type, score=score)
        state = dict(apply_evidence(state, fleet, evidence, RULES).agents)
    views = {t: skill_view(state["a"], fleet, t, NOW, RULES) for t in ("code", "math")}
    overall = skill_view(state["a"], fleet, None, NOW, RULES)
    assert views["math"].skill < overall.skill < views["code"].skill
    raw = state["a"]
    assert raw.overall.mean == pytest.approx((raw.types["code"].mean + raw.types["math"].mean) / 2)
    assert overall.sd >= min(v.sd for v in views.values())
    assert overall.low < overall.high
    third = ScoreEvidence(key="j3", at=NOW, agent_id="a", task_type="code", score=9.0)
    moved = apply_evidence(state, fleet, third, RULES).agents["a"]
    code_move = moved.types["code"].mean - raw.types["code"].mean
    assert moved.overall.mean - raw.overall.mean == pytest.approx(code_move / 2)
