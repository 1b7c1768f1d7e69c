"""Budgets' holds: what a request holds, whether it is granted, which holds count."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentladder.domain.budget import (
    MAX_OUTPUT_TOKENS,
    live_holds,
    output_tokens,
    refusal,
    reservation_nano,
    to_nano,
)
from agentladder.errors import InvalidInput


def test_output_tokens_are_the_requests_bound_else_the_default() -> None:
    """max_completion_tokens or max_tokens bound the answer (the larger when both are
    given, null is not given); without either, the configured default."""
    assert output_tokens({}, 1024) == 1024
    assert output_tokens({"max_tokens": 100}, 1024) == 100
    assert output_tokens({"max_completion_tokens": 300}, 1024) == 300
    assert output_tokens({"max_tokens": 100, "max_completion_tokens": 300}, 1024) == 300
    assert output_tokens({"max_tokens": None, "max_completion_tokens": None}, 7) == 7


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("max_tokens", "100", "must be a whole number of tokens ('100')"),
        ("max_tokens", 1.5, "must be a whole number of tokens (1.5)"),
        ("max_completion_tokens", True, "must be a whole number of tokens (True)"),
        ("max_tokens", 0, f"must be from 1 to {MAX_OUTPUT_TOKENS} (0)"),
        ("max_completion_tokens", MAX_OUTPUT_TOKENS + 1, "must be from 1 to"),
    ],
)
def test_a_bad_bound_is_refused_naming_the_field(field: str, value: object, reason: str) -> None:
    """A bound that is not a whole number from 1 up is InvalidInput naming the field and
    the value."""
    with pytest.raises(InvalidInput) as refused:
        output_tokens({field: value}, 1024)
    assert refused.value.field == field
    assert str(refused.value).startswith(f"{field}: ")
    assert reason in str(refused.value)


def test_a_hold_is_the_tokens_at_the_prices() -> None:
    """Prompt tokens at the input price plus output tokens at the output price, per
    million, in nano-dollars: 100 output tokens at $2,000/Mtok are $0.20 exactly."""
    assert reservation_nano(0, 100, 0.0, 2000.0) == 200_000_000
    assert reservation_nano(1_000_000, 1_000_000, 1.0, 2.0) == to_nano(3.0)
    assert reservation_nano(11, 7, 1.0, 2.0) == 25_000  # the cost call_cost charges
    assert reservation_nano(5, 5, 0.0, 0.0) == 0


def test_a_hold_is_granted_only_when_it_fits() -> None:
    """Refused as spent at or over the limit; as not fitting when spend, other holds and
    it pass the limit; granted when they reach it exactly."""
    limit = 1.0
    assert refusal(0, 0, 200_000_000, limit) is None
    assert refusal(600_000_000, 200_000_000, 200_000_000, limit) is None  # exactly $1
    assert refusal(600_000_000, 200_000_001, 200_000_000, limit) == "does_not_fit"
    assert refusal(0, 0, 1_000_000_001, limit) == "does_not_fit"
    assert refusal(1_000_000_000, 0, 0, limit) == "spent"
    assert refusal(1_500_000_000, 0, 1, limit) == "spent"


@given(
    st.integers(0, 10**12), st.lists(st.integers(0, 10**10), max_size=60),
    st.floats(0.01, 1000.0),
)  # fmt: skip
def test_granted_holds_never_pass_the_limit(spent: int, wants: list[int], limit: float) -> None:
    """Holds granted one after another, each against the spend and those before it,
    together with the spend never pass the limit (when the spend did not already)."""
    held = 0
    for want in wants:
        if refusal(spent, held, want, limit) is None:
            held += want
    if spent <= to_nano(limit):
        assert spent + held <= to_nano(limit)
    else:
        assert held == 0


def test_expired_holds_count_no_more() -> None:
    """A hold counts until its expiry (exclusive), then it is dropped."""
    holds = {"a": (5, 100.0), "b": (7, 200.0)}
    assert live_holds(holds, 99.0) == holds
    assert live_holds(holds, 100.0) == {"b": (7, 200.0)}
    assert live_holds(holds, 250.0) == {}
