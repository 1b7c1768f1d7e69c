"""The observation table built page by page (``domain/skill/table.py``) is the table the
whole evidence gave before: same rows in the same order, same names, same indices."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentladder.domain.skill.table import TableBuilder, key_ranks, observations_of
from tests.domain.table_helpers import assert_same_table, generated_log


@settings(derandomize=True, max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), count=st.integers(0, 120), page=st.integers(1, 40))
def test_a_paged_table_equals_the_whole_evidence_table(seed: int, count: int, page: int) -> None:
    """Any log, added in pages of any size, gives the reference table of the whole log."""
    evidence = generated_log(count, seed, exotic=True)
    builder = TableBuilder()
    for start in range(0, len(evidence), page):
        builder.add(evidence[start : start + page])
    assert builder.events == len(evidence)
    assert_same_table(builder.build(), evidence)


def test_the_table_does_not_depend_on_the_arrival_order() -> None:
    """The same evidence in another order gives the same table."""
    evidence = generated_log(300, seed=3, exotic=True)
    first = observations_of(evidence)
    random.Random(1).shuffle(evidence)
    again = observations_of(evidence)
    assert first.pairs == again.pairs
    assert first.sources == again.sources
    for name in ("pair", "source", "group", "event", "value", "binary", "at"):
        assert np.array_equal(getattr(first, name), getattr(again, name)), name


@settings(derandomize=True, max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=90), max_size=60))
@example(["a", "a\x00", "\ud800", "\uffff", "\U00010000", "é", "z" * 80 + "b", "z" * 80 + "a", "a"])
def test_key_ranks_follow_the_order_of_the_text(keys: list[str]) -> None:
    """Each key's rank is its place among the distinct keys as Python sorts the text
    (code points), for any text: long shared prefixes, NUL bytes, surrogates, astral."""
    encoded = [k.encode("utf-8", "surrogatepass") for k in keys]
    offsets = np.cumsum([0, *map(len, encoded)]).astype(np.int64)
    ranks = key_ranks(b"".join(encoded), offsets)
    distinct = sorted(set(keys))
    assert ranks.tolist() == [distinct.index(k) for k in keys]
