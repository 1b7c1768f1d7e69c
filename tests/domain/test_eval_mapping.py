"""The rules that turn an evaluation log's sample into a judgment (docs/import.md)."""

from __future__ import annotations

import math

import pytest

from agentladder.domain.agents import validate_agent_name
from agentladder.domain.eval_mapping import (
    agent_id_of,
    contract_id_of,
    normalized_score,
    task_type_of,
    token_cost,
)
from agentladder.domain.judgment import CONTRACT_ID_MAX


@pytest.mark.parametrize(
    ("model", "agent"),
    [
        ("openai/gpt-4o-mini", "openai-gpt-4o-mini"),
        ("anthropic/claude-3.5 sonnet@2024", "anthropic-claude-3.5-sonnet-2024"),
        ("mockllm/model", "mockllm-model"),
        ("..//x..y", "x.y"),
        ("///", None),
        ("m" * 100, "m" * 64),
    ],
)
def test_a_model_name_becomes_a_valid_agent_id(model: str, agent: str | None) -> None:
    """Runs of other characters become one '-', dots collapse, ends trimmed, 64 at most."""
    assert agent_id_of(model) == agent
    if agent is not None:
        assert validate_agent_name(agent) == agent


def test_a_task_name_becomes_a_task_type() -> None:
    """Lowercased over a-z 0-9 _ . -; nothing left: None."""
    assert task_type_of("Math/GSM8K") == "math-gsm8k"
    assert task_type_of("inspect_evals/mmlu_0_shot") == "inspect_evals-mmlu_0_shot"
    assert task_type_of("???") is None


def test_the_contract_id_is_stable_and_fits() -> None:
    """Same eval, sample and epoch: same id; another epoch: another; too long: hashed."""
    assert contract_id_of("E1", 3, 1) == "inspect:E1:3:1"
    assert contract_id_of("E1", 3, 1) == contract_id_of("E1", "3", 1)
    assert contract_id_of("E1", 3, 2) != contract_id_of("E1", 3, 1)
    long = contract_id_of("E1", "s" * 300, 1)
    assert long.startswith("inspect:sha256:")
    assert len(long) <= CONTRACT_ID_MAX
    assert long == contract_id_of("E1", "s" * 300, 1)


@pytest.mark.parametrize(
    ("value", "score"),
    [("C", 10.0), ("P", 5.0), ("I", 0.0), ("N", 0.0), ("c", 10.0), (True, 10.0),
     (False, 0.0), (0.0, 0.0), (1, 10.0), (0.42, 4.2), (1.5, 1.5), (10, 10.0), (7, 7.0),
     (10.5, None), (-0.1, None), (math.nan, None), ("X", None), ({"a": 1}, None),
     ([1], None), (None, None)],
)  # fmt: skip
def test_scores_are_normalized_to_0_10(value: object, score: float | None) -> None:
    """Letters, booleans, 0-1 (times 10) and 0-10 (as is); everything else: None."""
    got = normalized_score(value)
    assert got == (None if score is None else pytest.approx(score))


def test_token_cost_uses_prices_per_million() -> None:
    """1000 input and 500 output tokens at 2 and 8 per million tokens: 0.006."""
    assert token_cost(1000, 500, 2.0, 8.0) == pytest.approx(0.006)
