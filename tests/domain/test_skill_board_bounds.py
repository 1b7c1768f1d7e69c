"""The skill board for any stored estimate: the tier grouping always ends, every shown
value is on the 0-10 scale, no interval is inverted (NaN and infinities included), and
every settled agent is within the evidence of its tier's best."""

from __future__ import annotations

import itertools
import math
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from hypothesis import given, settings
from hypothesis import strategies as st

from agentladder.domain.skill import FleetSkill, SkillRules, skill_board, skill_view
from agentladder.domain.skill.board import SkillEntry, separated, tiers
from agentladder.domain.skill.state import AgentSkill, Estimate, new_skill

RULES = SkillRules()
NOW = 2_000_000.0
T = TypeVar("T")

ANY_FLOAT = st.floats(allow_nan=True, allow_infinity=True)
WIDE = st.one_of(
    st.floats(-1e6, 1e6), st.sampled_from([math.nan, math.inf, -math.inf, 0.0, -0.0, 1e308])
)


class _Hung(Exception):
    """The call did not return in time."""


@contextmanager
def _within(seconds: float) -> Iterator[None]:
    """Interrupts a pure-Python loop that runs longer than ``seconds`` (a hang fails the
    test instead of stopping the suite)."""

    def stop(signum: int, frame: object) -> None:
        raise _Hung(f"did not return within {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _bounded(call: Callable[[], T], seconds: float = 5.0) -> T:
    with _within(seconds):
        return call()


def _entry(name: str, skill: float, low: float, high: float) -> SkillEntry:
    return SkillEntry(
        agent_id=name, task_type=None, skill=skill, sd=1.0, low=low, high=high,
        observations=1, provisional=False,
    )  # fmt: skip


def test_an_inverted_interval_does_not_hang_the_tiers() -> None:
    """The stored case that hung the server: low 10.0009 above high 10.0 ends in tiers."""
    entries = [_entry("over", 10.0, 10.0009, 10.0), _entry("under", 7.0, 6.0, 8.0)]
    grouped = _bounded(lambda: tiers(entries))
    assert grouped == {"over": 1, "under": 2}


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.tuples(ANY_FLOAT, ANY_FLOAT, ANY_FLOAT), min_size=0, max_size=12))
def test_the_tier_grouping_ends_for_any_values(values: list[tuple[float, float, float]]) -> None:
    """Any skills and interval ends (NaN, infinities, inverted): every entry gets a tier,
    tiers count up from 1 without gaps, and the grouping ends within one pass an entry."""
    entries = [_entry(f"a{i}", s, lo, hi) for i, (s, lo, hi) in enumerate(values)]
    grouped = _bounded(lambda: tiers(entries))
    assert set(grouped) == {e.agent_id for e in entries}
    used = sorted(set(grouped.values()))
    assert used == list(range(1, len(used) + 1))
    assert len(used) <= len(entries)


def _state(name: str, mean: float, var: float, type_mean: float, type_var: float) -> AgentSkill:
    base = new_skill(name, RULES)
    return AgentSkill(
        agent_id=name,
        overall=Estimate(mean=mean, var=var, n=3, at=NOW),
        evaluator=base.evaluator,
        types={"code": Estimate(mean=type_mean, var=type_var, n=3, at=NOW)},
    )


def _on_scale(entry: SkillEntry) -> None:
    for value in (entry.skill, entry.sd, entry.low, entry.high):
        assert math.isfinite(value), entry
    assert 0.0 <= entry.low <= entry.skill <= entry.high <= 10.0, entry
    assert entry.sd > 0.0, entry


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    st.lists(st.tuples(WIDE, WIDE, WIDE, WIDE), min_size=1, max_size=8),
    WIDE,
    WIDE,
)
def test_any_stored_estimate_is_shown_on_the_scale_and_the_board_ends(
    values: list[tuple[float, float, float, float]], level: float, level_var: float
) -> None:
    """Stored means and variances of any value (past 10, negative, NaN, infinite, zero
    variance) show as finite values with 0 <= low <= skill <= high <= 10, and the board of
    them (overall and per task type) is tiered without hanging: a tier for each settled
    estimate, none for a provisional one, listed after the settled."""
    states = [_state(f"a{i}", *v) for i, v in enumerate(values)]
    fleet = FleetSkill(levels={"code": Estimate(mean=level, var=level_var, n=1, at=NOW)})
    for task_type in (None, "code"):
        board = _bounded(lambda t=task_type: skill_board(states, fleet, t, NOW, RULES))  # type: ignore[misc]
        assert len(board) == len(states)
        for entry in board:
            _on_scale(entry)
            assert (entry.tier is None) == entry.provisional
            assert entry.tier is None or entry.tier >= 1
        flags = [e.provisional for e in board]
        assert flags == sorted(flags)
        for state in states:
            _on_scale(skill_view(state, fleet, task_type, NOW, RULES))


def test_an_estimate_past_ten_reads_ten_with_an_interval_that_is_not_inverted() -> None:
    """A mean of 10.01 with a small sd reads at most 10 with an interval within 9.99-10,
    not low 10.0009 over high 10 (with no floor on the sd; with the default ``sd_floor``,
    0.05, within 9.85-10)."""
    state = _state("over", 10.01, 1e-6, 10.01, 1e-6)
    entry = skill_view(state, FleetSkill(), "code", NOW, RULES.model_copy(update={"sd_floor": 0.0}))
    assert 9.99 <= entry.low <= entry.skill <= entry.high <= 10.0
    floored = skill_view(state, FleetSkill(), "code", NOW, RULES)
    assert 9.85 <= floored.low <= floored.skill <= floored.high <= 10.0
    assert floored.high - floored.low > 0.0


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.floats(0.0, 10.0), st.floats(0.01, 1.0)), min_size=1, max_size=30))
def test_every_agent_is_within_the_evidence_of_its_tiers_best(
    values: list[tuple[float, float]],
) -> None:
    """Any board of settled agents: tiers count up from 1 down the list without gaps,
    every agent is not separated from its tier's first (best) agent, so a tier spans at
    most 1.96 * sqrt(2) of the largest sd (2.77 points at ``provisional_sd`` 1.0); and a
    tier ends only before the first agent separated from its best, at the widest gap
    between neighbours down to that agent."""
    entries = sorted(
        (_entry(f"a{i:02d}", s, s - sd, s + sd).model_copy(update={"sd": sd})
         for i, (s, sd) in enumerate(values)),
        key=lambda e: (-e.skill, e.agent_id),
    )  # fmt: skip
    grouped = tiers(entries)
    order = [grouped[e.agent_id] for e in entries]
    assert order == sorted(order)
    assert sorted(set(order)) == list(range(1, max(order) + 1))
    z = RULES.interval_z
    for position, entry in enumerate(entries):
        first = order.index(order[position])
        best = entries[first]
        assert entry is best or not separated(best, entry, z), (best, entry)
        assert best.skill - entry.skill < z * math.sqrt(2.0) * 1.0
        if position + 1 < len(entries) and order[position + 1] != order[position]:  # an end
            reach = next(p for p in range(first + 1, len(entries))
                         if separated(best, entries[p], z))  # fmt: skip
            assert position < reach

            def gap(p: int) -> float:
                upper, lower = entries[p], entries[p + 1]
                return (upper.skill - lower.skill) / math.hypot(upper.sd, lower.sd)

            assert all(gap(position) >= gap(p) for p in range(first, reach))


def _settled(name: str, skill: float, sd: float = 1.0) -> SkillEntry:
    return _entry(name, skill, skill - 1.96 * sd, skill + 1.96 * sd).model_copy(update={"sd": sd})


def test_a_chain_of_overlapping_intervals_does_not_hold_a_worse_agent_in_tier_1() -> None:
    """9.84, 8.0, 6.2 and 4.2, each sd 1.0 (settled): each overlaps its neighbour, so the
    rule that cut only where every agent above was separated from every agent below put
    all four in tier 1. Now 6.2 is separated from 9.84, so tier 1 ends before it, at the
    widest gap (9.84 to 8.0: 1.30 sd); tier 2 begins at 8.0 and ends before 4.2 (separated
    from 8.0) at its widest gap (6.2 to 4.2: 1.41 sd): 9.84 | 8.0, 6.2 | 4.2."""
    entries = [_settled("a", 9.84), _settled("b", 8.0), _settled("c", 6.2), _settled("d", 4.2)]
    assert not any(separated(u, v, RULES.interval_z) for u, v in itertools.pairwise(entries))
    assert tiers(entries) == {"a": 1, "b": 2, "c": 2, "d": 3}


def test_a_provisional_estimate_takes_no_tier_and_is_listed_after_the_settled() -> None:
    """An agent at 4.2 with a wide provisional interval beside settled ones at 9.84 and 9.5
    (the extraction board's case: it shared tier 1 with 9.84 on its width alone): no tier,
    flagged provisional, listed after every settled agent however high its skill."""
    states = [
        _state("best", 9.84, 0.01, 9.84, 0.01),
        _state("next", 9.5, 0.01, 9.5, 0.01),
        _state("wide", 4.2, 4.0, 4.2, 4.0),
        _state("wide-high", 9.9, 4.0, 9.9, 4.0),
    ]
    fleet = FleetSkill(levels={"code": Estimate(mean=7.0, var=0.01, n=1, at=NOW)})
    for task_type in (None, "code"):
        board = skill_board(states, fleet, task_type, NOW, RULES)
        assert [e.agent_id for e in board[:2]] == ["best", "next"]
        assert [e.tier for e in board[:2]] == [1, 2]
        assert {e.agent_id for e in board[2:]} == {"wide", "wide-high"}
        assert all(e.provisional and e.tier is None for e in board[2:])
        assert board[2].skill >= board[3].skill
