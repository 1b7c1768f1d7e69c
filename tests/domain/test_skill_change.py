"""The skill model's change detector: a sudden move of an agent's quality is found within
a few updates and its estimate follows; a steady fleet raises no alarm."""

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
from agentladder.domain.skill.state import AgentSkill, Estimate
from agentladder.domain.skill.update import watched
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
    """Hand-computed: the innovation of a message of mean 2 (precision 1) against a prior
    of mean 5 (variance 1) is -3 / sqrt 2; the drop statistic adds it past the allowance
    (1); a crossing of the threshold (8) starts both statistics again."""
    prior = Estimate(mean=5.0, var=1.0)
    z = -3.0 / math.sqrt(2.0)
    drop, rise, changed = watched(None, prior, 1.0, 2.0, RULES)
    assert drop == pytest.approx(-z - 1.0)
    assert rise == 0.0
    assert not changed
    found = Estimate(mean=5.0, var=1.0, drop=7.0, rise=3.0)
    assert watched(found, prior, 1.0, 2.0, RULES) == (0.0, 0.0, True)  # 7 + 2.12 - 1 > 8
    assert watched(found, prior, 1.0, 2.0, OFF) == (7.0, 3.0, False)  # detection off
    assert watched(found, prior, 0.0, 0.0, RULES) == (7.0, 3.0, False)  # no information


def _followed(
    agent: str, now: float, seeds: tuple[int, int]
) -> dict[str, list[tuple[float, float]]]:
    """Agent ``agent`` at ``now`` after 150 deliberations of 3 of the 5 (one round): its
    (skill, sd) after each of the next deliberations it takes part in, with the detector
    and without."""
    first = deliberations(BEFORE, 150, honest(0.5), seed=seeds[0], task_type=TYPE, size=3, rounds=1)
    moved = {**BEFORE, agent: now}
    after = _later(deliberations(moved, 30, honest(0.5), seed=seeds[1], size=3, rounds=1), 150)
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


def test_a_sudden_drop_is_found_within_a_few_deliberations_and_the_estimate_follows() -> None:
    """Agent a falls from 8 to 5: within its first 3 deliberations after the fall its
    uncertainty is back above 1, and after 8 its estimate is within 0.5 of 5; without the
    detector it is still above 6.5 then, falling about 0.1 a deliberation."""
    found = _followed("a", 5.0, (3, 40))
    assert max(sd for _, sd in found["on"][:3]) > 1.0
    assert abs(found["on"][7][0] - 5.0) < 0.5
    assert max(sd for _, sd in found["off"][:8]) < 0.3
    assert found["off"][7][0] > 6.5


def test_a_sudden_rise_is_found_too() -> None:
    """Agent e rises from 3.5 to 6.5: after 8 deliberations its estimate is within 0.5 of
    it, and without the detector it is still below 5.5."""
    found = _followed("e", 6.5, (5, 41))
    assert abs(found["on"][7][0] - 6.5) < 0.5
    assert found["off"][7][0] < 5.5


def test_a_steady_fleet_raises_no_alarm() -> None:
    """400 deliberations of five agents whose quality never moves (2,000 updates, noise
    1.0): every estimate is exactly the one the model gives without the detector."""
    events = deliberations(BEFORE, 400, honest(1.0), seed=7, task_type=TYPE)
    on, on_fleet = fold(events, RULES)
    off, off_fleet = fold(events, OFF)
    for agent in BEFORE:
        assert on[agent].types[TYPE].mean == off[agent].types[TYPE].mean
        assert on[agent].types[TYPE].var == off[agent].types[TYPE].var
    assert on_fleet == off_fleet


def test_a_model_change_starts_the_statistics_again() -> None:
    """After a model change the detector watches the new model from zero."""
    states, fleet = fold(deliberations(BEFORE, 30, honest(0.5), seed=8, task_type=TYPE))
    drifting = states["a"].types[TYPE]
    states["a"] = AgentSkill(
        agent_id="a", overall=states["a"].overall, evaluator=states["a"].evaluator,
        types={TYPE: Estimate(mean=drifting.mean, var=drifting.var, n=drifting.n,
                              at=drifting.at, drop=5.0, rise=1.0)},
    )  # fmt: skip
    change = ModelChange(key="model:a:1", at=2_000_000.0, agent_id="a", model_name="m2")
    moved = apply_evidence(states, fleet, change, RULES).agents["a"].types[TYPE]
    assert (moved.drop, moved.rise) == (0.0, 0.0)
