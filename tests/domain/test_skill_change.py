"""The skill model's change detector: a sudden move of an agent's quality is found within
a few updates and its estimate follows, in the fit (which orders evidence by when it
happened) and between fits; a steady fleet raises no alarm."""

from __future__ import annotations

import math

import pytest

from agentladder.domain.skill import (
    DeliberationEvidence,
    ModelChange,
    SkillRules,
    apply_evidence,
    skill_view,
)
from agentladder.domain.skill.chain import watched
from agentladder.domain.skill.state import Estimate, replace
from tests.domain.skill_helpers import deliberations, fold, honest

RULES = SkillRules()
OFF = SkillRules(change_threshold=0.0)
TYPE = "code_review"
BEFORE = {"a": 8.0, "b": 6.5, "c": 5.5, "d": 4.5, "e": 3.5}


def _later(events: list[DeliberationEvidence], start: int) -> list[DeliberationEvidence]:
    """The same deliberations, keyed and timed after the first ``start``."""
    return [
        e.model_copy(update={"key": f"d{start + i}", "at": 1_000_000.0 + 60.0 * (start + i)})
        for i, e in enumerate(events)
    ]


def test_the_statistics_follow_pages_cusum_and_reset_when_they_cross() -> None:
    """Hand-computed: the innovation of a message of mean 2 (variance 1) against a prior
    of mean 5 (variance 1) is -3 / sqrt 2; the drop statistic adds it past the allowance
    (1); a crossing of the threshold (8) starts both statistics again."""
    z = -3.0 / math.sqrt(2.0)
    drop, rise, changed = watched(0.0, 0.0, (5.0, 1.0), (2.0, 1.0), RULES)
    assert drop == pytest.approx(-z - 1.0)
    assert rise == 0.0
    assert not changed
    assert watched(7.0, 3.0, (5.0, 1.0), (2.0, 1.0), RULES) == (0.0, 0.0, True)  # 7+2.12-1 > 8
    assert watched(7.0, 3.0, (5.0, 1.0), (2.0, 1.0), OFF) == (7.0, 3.0, False)  # detection off


def _runs(agent: str, now: float, seeds: tuple[int, int]) -> tuple[list, list]:  # type: ignore[type-arg]
    first = deliberations(BEFORE, 150, honest(0.5), seed=seeds[0], task_type=TYPE, size=3, rounds=1)
    moved = {**BEFORE, agent: now}
    after = _later(deliberations(moved, 30, honest(0.5), seed=seeds[1], size=3, rounds=1), 150)
    return first, after


def _followed_live(
    agent: str, now: float, seeds: tuple[int, int]
) -> dict[str, list[tuple[float, float]]]:
    """Agent ``agent`` after 150 deliberations of 3 of the 5 (fitted), then moved to
    ``now``: its (skill, sd) after each of the next deliberations it takes part in, by
    the filter steps between fits, with the detector and without."""
    first, after = _runs(agent, now, seeds)
    out: dict[str, list[tuple[float, float]]] = {}
    for name, rules in (("on", RULES), ("off", OFF)):
        states, fleet = fold(first, rules)
        seen = out[name] = []
        for event in after:
            states, fleet = fold([event], rules, states, fleet)
            if agent in event.agents:
                view = skill_view(states[agent], fleet, TYPE, event.at, rules)
                seen.append((view.skill, view.sd))
    return out


def test_a_sudden_drop_is_found_within_a_few_deliberations_between_fits() -> None:
    """Agent a falls from 8 to 5: within its first 3 deliberations after the fall its
    uncertainty jumps (from under 0.1 to over 0.8: the detector's alarm), and after 8 its
    estimate is within 0.5 of 5; without the detector it is still above 6.5 then."""
    found = _followed_live("a", 5.0, (3, 40))
    assert max(sd for _, sd in found["on"][:3]) > 0.8
    assert abs(found["on"][7][0] - 5.0) < 0.5
    assert found["off"][7][0] > 6.5


def test_a_sudden_rise_is_found_too() -> None:
    """Agent e rises from 3.5 to 6.5: after 8 deliberations its estimate is within 0.5 of
    it, and without the detector it is still below 5.5."""
    found = _followed_live("e", 6.5, (5, 41))
    assert abs(found["on"][7][0] - 6.5) < 0.5
    assert found["off"][7][0] < 5.5


def test_the_fit_follows_a_sudden_drop_in_the_order_the_evidence_happened() -> None:
    """All 180 deliberations fitted at once, given in shuffled order: agent a's estimate
    follows its fall to 5 (its evidence is placed by when it happened), where without the
    detector it stays near its long average."""
    first, after = _runs("a", 5.0, (3, 40))
    everything = first + after
    shuffled = everything[::-1]
    on, on_fleet = fold(shuffled, RULES)
    again, again_fleet = fold(everything, RULES)
    off, off_fleet = fold(everything, OFF)
    at = after[-1].at
    followed = skill_view(on["a"], on_fleet, TYPE, at, RULES)
    assert abs(followed.skill - 5.0) < 0.6, followed
    assert followed.skill == skill_view(again["a"], again_fleet, TYPE, at, RULES).skill
    assert skill_view(off["a"], off_fleet, TYPE, at, OFF).skill > 6.5


def test_a_steady_fleet_raises_no_alarm() -> None:
    """400 deliberations of five agents whose quality never moves (noise 1.0): every
    estimate is exactly the one the model gives without the detector."""
    events = deliberations(BEFORE, 400, honest(1.0), seed=7, task_type=TYPE)
    on, on_fleet = fold(events, RULES)
    off, _ = fold(events, OFF)
    for agent in BEFORE:
        assert on[agent].types[TYPE].mean == off[agent].types[TYPE].mean
        assert on[agent].types[TYPE].var == off[agent].types[TYPE].var
    assert on_fleet.levels == fold(events, OFF)[1].levels


def test_a_model_change_starts_the_statistics_again() -> None:
    """After a model change the detector watches the new model from zero."""
    states, fleet = fold(deliberations(BEFORE, 30, honest(0.5), seed=8, task_type=TYPE))
    drifting = states["a"].types[TYPE]
    states["a"] = replace(states["a"], types={TYPE: replace(drifting, drop=5.0, rise=1.0)})
    change = ModelChange(key="model:a:1", at=2_000_000.0, agent_id="a", model_name="m2")
    moved = apply_evidence(states, fleet, change, RULES).agents["a"].types[TYPE]
    assert (moved.drop, moved.rise) == (0.0, 0.0)
    assert isinstance(moved, Estimate)
