"""The chains run in place on their inputs (``chain.run_chains``) and the scores at a bound
kept apart (``censored.py``) give what the whole-array versions gave, bit for bit."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from agentladder.domain.skill.censored import Censored
from agentladder.domain.skill.chain import chains_of, run_chains
from agentladder.domain.skill.observations import Observations
from agentladder.domain.skill.rules import SkillRules
from tests.domain import chain_reference


@settings(derandomize=True, max_examples=40, deadline=None)
@given(
    st.integers(1, 12),
    st.integers(0, 400),
    st.integers(0, 2**32 - 1),
    st.sampled_from([0.0, 1.5, 4.0]),
)
def test_the_chains_in_place_equal_the_whole_array_run(
    pairs: int, count: int, seed: int, threshold: float
) -> None:
    """Both filters' ends, the path and the smoothed means of messages of any pairs, times,
    model changes and detector are those of the run that kept each in an array of its own."""
    rng = np.random.default_rng(seed)
    pair = rng.integers(0, pairs, count).astype(np.int32)
    at = (rng.integers(0, 30, count) * 43_200.0).astype(np.float64)
    live = rng.random(count) < 0.7
    agents = [f"a{i % 3}" for i in range(pairs)]
    changes = {"a1": [86_400.0 * 3, 86_400.0 * 9]}
    rules = SkillRules(change_threshold=threshold)
    chains, order = chains_of(pair, at, live, agents, changes, pairs, rules)
    start_mean, start_var = rng.normal(5, 2, pairs), rng.uniform(0.5, 4, pairs)
    mean = rng.normal(5, 3, count)[order]
    var = rng.uniform(0.2, 9, count)[order]
    want = chain_reference.run_chains(chains, start_mean, start_var, mean, var, rules)
    for path in (False, True):
        run = run_chains(chains, start_mean, start_var, mean.copy(), var.copy(), rules, path)
        got = [run.still_mean, run.still_var, run.moving_mean, run.moving_var, run.drop,
               run.rise, run.path_mean, run.path_var, run.smoothed]  # fmt: skip
        for index, (have, expected) in enumerate(zip(got, want, strict=True)):
            if have is None:
                assert not path
                continue
            assert have.tobytes() == expected.tobytes(), index


def _table(values: list[float], scored: list[bool]) -> Observations:
    n = len(values)
    index = np.zeros(n, dtype=np.int32)
    return Observations(
        pairs=[("a", "t")], sources=["judge:j"], group_count=0, event_count=n, pair=index,
        source=np.where(scored, 0, -1).astype(np.int32), group=index - 1,
        event=np.arange(n, dtype=np.int32), value=np.array(values),
        binary=~np.array(scored, dtype=bool), at=np.zeros(n),
    )  # fmt: skip


@settings(derandomize=True, max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([0.0, 10.0, 3.5, 7.0, 1.0]), st.booleans(), st.booleans()),
        min_size=1,
        max_size=80,
    ),
    st.integers(1, 20),
)
def test_the_censored_scores_kept_apart_equal_whole_arrays(
    rows: list[tuple[float, bool, bool]], block: int
) -> None:
    """A Tobit step block by block on the scores at a bound gives every observation's
    working value and extra variance as whole arrays written block by block did: the given
    value and 0 off the bounds, a guess beyond the bound where censored."""
    values = [v for v, _, _ in rows]
    table = _table(values, [s for _, s, _ in rows])
    censoring_all = np.array([s and c for _, s, c in rows])
    expected_all = np.linspace(2.0, 8.0, len(rows))
    sd_all = np.linspace(0.5, 3.0, len(rows))
    kept = Censored(table)
    value, extra = table.value.copy(), np.zeros(len(rows))
    for start in range(0, len(rows), block):
        at = slice(start, min(len(rows), start + block))
        kept.step(at, expected_all[at], sd_all[at], censoring_all[at])
        whole = Censored(table)  # the whole block's arrays, as written before
        whole.at = np.arange(at.start, at.stop)
        whole.value, whole.extra = table.value[at].copy(), np.zeros(at.stop - at.start)
        whole.step(at, expected_all[at], sd_all[at], censoring_all[at])
        value[at], extra[at] = whole.value, whole.extra
    assert kept.values(slice(None)).tobytes() == value.tobytes()
    assert kept.extras(slice(None)).tobytes() == extra.tobytes()
    assert len(kept.at) == sum(1 for v, s, _ in rows if s and v in (0.0, 10.0))
