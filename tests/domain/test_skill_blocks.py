"""The fit's work made block by block (``domain/skill/blocks.py``) gives what one pass over
every observation gives, bit for bit: its sums, and a whole fit made in blocks of any size."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentladder.domain.skill import SkillRules, fit_observations, observations_of
from agentladder.domain.skill import blocks as skill_blocks
from agentladder.domain.skill.blocks import RunningSums, slices
from tests.domain.table_helpers import generated_log


@settings(derandomize=True, max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 9), st.floats(-1e12, 1e12, allow_nan=False)), max_size=300),
    st.integers(1, 50),
)
def test_running_sums_equal_one_bincount(items: list[tuple[int, float]], block: int) -> None:
    """Sums added block after block equal ``np.bincount`` over all the weights, bit for bit."""
    index = np.array([i for i, _ in items], dtype=np.int32)
    weights = np.array([w for _, w in items], dtype=np.float64)
    sums = RunningSums(10)
    for at in slices(len(items), block):
        sums.add(index[at], weights[at])
    assert sums.total.tobytes() == np.bincount(index, weights=weights, minlength=10).tobytes()


@pytest.mark.parametrize("exact_limit", [10, 10_000])
def test_a_fit_in_small_blocks_equals_the_fit_in_one(
    exact_limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fit of every kind of evidence made in blocks of 37 observations gives the same
    estimates, weights and clean-score chances bit for bit as one block of them all."""
    table = observations_of(generated_log(300, seed=5))
    rules = SkillRules(exact_limit=exact_limit)
    whole = fit_observations(table, rules)
    monkeypatch.setattr(skill_blocks, "BLOCK", 37)
    parts = fit_observations(table, rules)
    assert len(table) > 37 * 5
    assert whole.iterations == parts.iterations
    for name in ("weight", "clean", "value", "noise", "honesty"):
        assert getattr(whole, name).tobytes() == getattr(parts, name).tobytes(), name
    assert whole.solution.mean.tobytes() == parts.solution.mean.tobytes()
    assert whole.solution.var.tobytes() == parts.solution.var.tobytes()
