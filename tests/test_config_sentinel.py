"""The sentinel section's per-run keys: defaults and one-line errors naming key and value."""

from __future__ import annotations

import pytest

from agentladder.config import parse_settings
from agentladder.errors import InvalidInput


def test_per_run_bound_defaults() -> None:
    """A run is 1000 tasks and the bound must hold in 95 % of them unless configured."""
    sentinel = parse_settings({}).sentinel
    assert (sentinel.horizon, sentinel.confidence) == (1000, 0.95)
    custom = parse_settings({"sentinel": {"horizon": 0, "confidence": 0.9}}).sentinel
    assert (custom.horizon, custom.confidence) == (0, 0.9)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("horizon", -1, "sentinel.horizon: Input should be greater than or equal to 0 (-1)"),
        ("confidence", 1.0, "sentinel.confidence: Input should be less than 1 (1.0)"),
        ("confidence", 0, "sentinel.confidence: Input should be greater than 0 (0)"),
    ],
)
def test_bad_per_run_keys_are_one_line(key: str, value: object, message: str) -> None:
    """A horizon below 0 or a confidence outside (0, 1) is refused in one line."""
    with pytest.raises(InvalidInput) as caught:
        parse_settings({"sentinel": {key: value}})
    assert str(caught.value) == message
