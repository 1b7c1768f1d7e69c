"""Privileges per level, standing per task type, and the Sentinels' sampling rule."""

from __future__ import annotations

import pytest

from agentladder.domain.levels import Level
from agentladder.domain.privileges import (
    allows_complexity,
    privileges_for,
    sampling_decision,
    standing,
)
from agentladder.domain.profile import AgentProfile, Specialization
from agentladder.domain.rules import Complexity, MaxComplexity
from agentladder.errors import InvalidInput
from tests.domain.oracle_helpers import RULES


def profile_at(level: Level, **specs: Level) -> AgentProfile:
    return AgentProfile(
        id="a1",
        level=level,
        specializations={name: Specialization(level=lv) for name, lv in specs.items()},
    )


@pytest.mark.parametrize(
    ("level", "rate", "complexity", "retries", "self_correct", "mentor"),
    [
        (Level.ROOKIE, 1.0, MaxComplexity.SIMPLE, 3, False, False),
        (Level.RELIABLE, 0.2, MaxComplexity.MEDIUM, 5, False, False),
        (Level.TRUSTED, 0.05, MaxComplexity.COMPLEX, 10, True, False),
        (Level.EXPERT, 0.0, MaxComplexity.ANY, None, True, True),
    ],
)
def test_privileges_per_level_are_the_specification(
    level: Level,
    rate: float,
    complexity: MaxComplexity,
    retries: int | None,
    self_correct: bool,
    mentor: bool,
) -> None:
    """Validation 1.0/0.2/0.05/0.0, simple/medium/complex/any, retries 3/5/10/unlimited."""
    got = privileges_for(profile_at(level), RULES)
    assert (got.level, got.validation_rate, got.max_complexity, got.max_retries) == (
        level,
        rate,
        complexity,
        retries,
    )
    assert (got.can_self_correct, got.can_mentor) == (self_correct, mentor)


def test_task_type_uses_the_specialization_level() -> None:
    """An expert overall who is new to a task type is a rookie at it."""
    expert = profile_at(Level.EXPERT, sql=Level.TRUSTED)
    assert standing(expert) is Level.EXPERT
    assert standing(expert, "sql") is Level.TRUSTED
    assert standing(expert, "poetry") is Level.ROOKIE
    assert privileges_for(expert, RULES, "poetry").validation_rate == 1.0
    assert privileges_for(expert, RULES, "sql").validation_rate == 0.05


def test_unknown_agent_is_a_rookie() -> None:
    """An agent never judged has the rookie privileges."""
    assert privileges_for(None, RULES).level is Level.ROOKIE


@pytest.mark.parametrize(
    ("maximum", "allowed"),
    [
        (MaxComplexity.SIMPLE, {Complexity.SIMPLE}),
        (MaxComplexity.MEDIUM, {Complexity.SIMPLE, Complexity.MEDIUM}),
        (MaxComplexity.COMPLEX, set(Complexity)),
        (MaxComplexity.ANY, set(Complexity)),
    ],
)
def test_allowed_complexity(maximum: MaxComplexity, allowed: set[Complexity]) -> None:
    """A level may take tasks up to its maximum complexity and no further."""
    assert {c for c in Complexity if allows_complexity(maximum, c)} == allowed


def test_sampling_decision_reasons() -> None:
    """force → requested; a draw below the rate → sampled; else skipped_by_level."""
    assert sampling_decision(Level.RELIABLE, 0.2, 0.19, False).reason == "sampled"
    assert sampling_decision(Level.RELIABLE, 0.2, 0.2, False).reason == "skipped_by_level"
    assert not sampling_decision(Level.EXPERT, 0.0, 0.0, False).validate_output
    forced = sampling_decision(Level.EXPERT, 0.0, 0.99, True)
    assert forced.validate_output
    assert forced.reason == "requested"
    assert forced.model_dump(by_alias=True)["validate"] is True


def test_rookie_is_always_validated() -> None:
    """A rate of 1.0 samples every draw in [0, 1)."""
    assert all(
        sampling_decision(Level.ROOKIE, 1.0, d / 100, False).validate_output for d in range(100)
    )


@pytest.mark.parametrize("draw", [-0.1, 1.0, float("nan"), float("inf")])
def test_sampling_refuses_a_draw_outside_unit_interval(draw: float) -> None:
    """The random draw must be in [0, 1); anything else is named in the error."""
    with pytest.raises(InvalidInput) as caught:
        sampling_decision(Level.ROOKIE, 1.0, draw, False)
    assert caught.value.field == "draw"
