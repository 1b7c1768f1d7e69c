"""Bad judgments and bad rule overrides are refused with the field and the value named."""

from __future__ import annotations

import math
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from agentladder.domain.judgment import Judgment
from agentladder.domain.rules import OracleRules

GOOD: dict[str, Any] = {"agent_id": "a1", "contract_id": "c1", "task_type": "sql", "score": 5}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("score", float("nan")),
        ("score", float("inf")),
        ("score", -0.1),
        ("score", 10.01),
        ("cost", -1.0),
        ("cost", float("inf")),
        ("duration_ms", -5.0),
        ("budget", -0.5),
        ("time_limit_ms", float("-inf")),
        ("retries", -1),
        ("contract_id", ""),
        ("contract_id", "   "),
        ("contract_id", "a\x00b"),
        ("contract_id", "x" * 257),
        ("task_type", "Image Generation"),
        ("task_type", ""),
        ("task_type", "a" * 65),
        ("task_type", "../etc"),
        ("agent_id", "a b"),
        ("agent_id", ""),
        ("agent_id", ".."),
        ("agent_id", "a*"),
        ("complexity", "galactic"),
    ],
)
def test_bad_judgment_field_is_named_with_its_value(field: str, value: object) -> None:
    """Each bad field is refused and the error message names the field and the input."""
    with pytest.raises(ValidationError) as caught:
        Judgment(**{**GOOD, field: value})
    errors = caught.value.errors()
    assert [e["loc"][0] for e in errors] == [field]
    assert field in str(caught.value)
    assert "input_value=" in str(caught.value)
    got = errors[0]["input"]
    both_nan = isinstance(got, float) and math.isnan(got) and math.isnan(float(str(value)))
    assert got == value or both_nan


def test_unknown_judgment_field_is_refused() -> None:
    """A field the Oracle does not know (e.g. xp) is refused, not silently dropped."""
    with pytest.raises(ValidationError) as caught:
        Judgment(**{**GOOD, "xp": 1000})
    assert "xp" in str(caught.value)


def test_rules_default_to_the_specification() -> None:
    """OracleRules() carries the specification's tables."""
    rules = OracleRules()
    assert (rules.xp.task_completed, rules.xp.first_try, rules.xp.under_budget) == (10, 5, 10)
    assert [(t.event, t.xp) for t in rules.xp.quality_tiers] == [
        ("quality_above_8", 15),
        ("quality_above_9", 25),
        ("perfect_score", 50),
    ]
    assert rules.xp.streak_milestones == {5: 25, 10: 50, 25: 100}
    assert rules.achievements.budget_hero == 75
    assert rules.achievements.expert == 200


def test_partial_yaml_override_keeps_the_other_defaults() -> None:
    """An oracle: section overriding one value leaves every other value as specified."""
    text = """
xp:
  task_completed: 12
levels:
  expert: 3000
privileges:
  reliable:
    validation_rate: 0.25
    max_complexity: medium
    max_retries: 5
    can_self_correct: false
    can_mentor: false
"""
    rules = OracleRules.model_validate(yaml.safe_load(text))
    assert rules.xp.task_completed == 12
    assert rules.xp.first_try == 5
    assert rules.levels.expert == 3000
    assert rules.levels.trusted == 500
    assert rules.privileges.reliable.validation_rate == 0.25
    assert rules.privileges.rookie.validation_rate == 1.0


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ({"xp": {"task_completed": -10}}, "task_completed"),
        ({"levels": {"trusted": 50}}, "trusted"),
        ({"levels": {"rookie": 5}}, "rookie"),
        ({"privileges": {"expert": {"validation_rate": 1.5}}}, "validation_rate"),
        ({"xp": {"streak_milestones": {0: 10}}}, "streak_milestones"),
        ({"xp": {"bogus": 1}}, "bogus"),
    ],
)
def test_bad_rule_override_is_refused_naming_the_field(
    override: dict[str, Any], named: str
) -> None:
    """Negative XP, thresholds out of order, rates over 1, unknown keys: refused by name."""
    with pytest.raises(ValidationError) as caught:
        OracleRules.model_validate(override)
    assert named in str(caught.value)
