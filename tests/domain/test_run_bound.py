"""The per-run bound: the exact CSP-1 chain against a hand computation and an explicit
state-by-state enumeration, and the clearances derived from it."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from agentladder.domain.probation import clearance_for
from agentladder.domain.run_bound import (
    DERIVED,
    exceedance,
    run_clearance,
    search_clearance,
    worst_exceedance,
)

State = tuple[str, int, int]  # ("P", passes, unvalidated) or ("S", 0, unvalidated)


def _adder(into: dict[State, float]) -> Callable[[State, float], None]:
    """A function adding weight to a state of ``into``."""

    def add(state: State, weight: float) -> None:
        into[state] = into.get(state, 0.0) + weight

    return add


def enumerate_chain(p: float, f: float, i: int, aoql: float, n: int, miss: float) -> float:
    """P(unvalidated failures > aoql n) by carrying every (mode, passes, count) state."""
    dist: dict[State, float] = {("P", 0, 0) if i > 0 else ("S", 0, 0): 1.0}
    found = p * (1 - miss)
    for _ in range(n):
        nxt: dict[State, float] = {}
        add = _adder(nxt)
        for (mode, k, u), w in dist.items():
            if mode == "P":
                add(("P", 0, u), w * found)
                add(("S", 0, u) if k + 1 == i else ("P", k + 1, u), w * (1 - found))
            else:
                add(("P", 0, u) if i > 0 else ("S", 0, u), w * f * found)
                add(("S", 0, u), w * f * (1 - found))
                add(("S", 0, u + 1), w * (1 - f) * p)
                add(("S", 0, u), w * (1 - f) * (1 - p))
        dist = nxt
    limit = math.floor(aoql * n + 1e-9)
    return sum(w for (_, _, u), w in dist.items() if u > limit)


def test_a_two_task_run_by_hand() -> None:
    """f 0.5, clearance 1, p 0.5, 2 tasks, aoql 0.25 (no failure may slip): the first task
    passes (1/2), leaving probation, and the second fails unvalidated (1/4): 1/8."""
    assert exceedance(0.5, 0.5, 1, 0.25, 2) == pytest.approx(0.125, abs=1e-15)


@pytest.mark.parametrize(
    ("p", "f", "i", "aoql", "n", "miss"),
    [
        (0.1, 0.2, 3, 0.1, 20, 0.0),
        (0.3, 0.5, 2, 0.2, 15, 0.1),
        (0.05, 0.05, 0, 0.05, 40, 0.0),
        (0.2, 0.3, 5, 0.1, 30, 0.2),
        (0.04, 0.05, 12, 0.02, 60, 0.0),
    ],
)
def test_the_chain_matches_an_explicit_enumeration(
    p: float, f: float, i: int, aoql: float, n: int, miss: float
) -> None:
    """The O(counts)-per-step computation equals carrying every state explicitly."""
    assert exceedance(p, f, i, aoql, n, miss) == pytest.approx(
        enumerate_chain(p, f, i, aoql, n, miss), abs=1e-12
    )


@pytest.mark.parametrize(("f", "expected"), [(0.2, 60), (0.05, 125), (0.02, 144)])
def test_default_clearances_are_the_least_that_bound_each_run(f: float, expected: int) -> None:
    """At aoql 0.02 over 1000 tasks in 95 % of runs: reliable 60, trusted 125, an expert
    audited at 0.02 144; each keeps every failure rate's exceedance at or below 5 % and one
    pass less does not."""
    i = run_clearance(f, 0.02, 1000, 0.95)
    assert i == expected
    assert worst_exceedance(f, i, 0.02, 1000) <= 0.05
    assert worst_exceedance(f, i - 1, 0.02, 1000) > 0.05


@pytest.mark.parametrize("key", sorted(DERIVED))
def test_every_stored_clearance_is_what_the_search_finds(
    key: tuple[float, float, int, float, float],
) -> None:
    """The table the first rate requests read from is the search's own answer."""
    assert search_clearance(*key) == DERIVED[key]


def test_the_long_run_clearance_does_not_bound_a_run() -> None:
    """CSP-1's AOQL clearance at trusted (75) lets a run exceed aoql more than 5 % of the
    time at some failure rate: the per-run bound needs the longer one."""
    assert clearance_for(0.05, 0.02) == 75
    assert worst_exceedance(0.05, 75, 0.02, 1000) > 0.05


def test_a_missing_validator_needs_a_longer_clearance() -> None:
    """Missed failures count as passes: the clearance that bounds a run grows with them."""
    assert run_clearance(0.05, 0.02, 1000, 0.95, 0.1) > run_clearance(0.05, 0.02, 1000, 0.95)


def test_rookies_need_none_and_bad_input_is_refused() -> None:
    """At f 1 every output is validated (clearance 0); f 0 and a zero horizon are refused."""
    assert run_clearance(1.0, 0.02, 1000, 0.95) == 0
    with pytest.raises(ValueError, match="sampling fraction"):
        run_clearance(0.0, 0.02, 1000, 0.95)
    with pytest.raises(ValueError, match="horizon"):
        run_clearance(0.05, 0.02, 0, 0.95)
