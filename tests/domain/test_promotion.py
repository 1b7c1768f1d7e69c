"""Floor-based promotion: the eight rules of the seed and the decisions of DESIGN.md."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentladder.domain.promotion import (
    Participant,
    PromotionResult,
    apply_promotion,
    promote,
)
from agentladder.errors import InvalidInput


def run(ranks: dict[str, int], scores: dict[str, float | None]) -> PromotionResult:
    """Promote the agents of ``scores`` at their ``ranks``."""
    return promote([Participant(a, ranks.get(a, 0), s) for a, s in scores.items()])


# Golden: the seed's three example deliberations, chained


def test_seed_examples_chained() -> None:
    """Seed examples #1..#3 in sequence: B to 1, then A to 1 (B untouched), then A to 2."""
    ranks: dict[str, int] = {}

    first = run(ranks, {"A": 7.5, "B": 8.2, "C": 6.1})
    assert first == PromotionResult(0, ("A", "B", "C"), ("B",), "highest_score")
    ranks = apply_promotion(ranks, first)
    assert ranks == {"B": 1}

    second = run(ranks, {"A": 8.0, "B": 7.5, "C": 7.8, "D": 6.0})
    assert second == PromotionResult(0, ("A", "C", "D"), ("A",), "highest_score")
    ranks = apply_promotion(ranks, second)
    assert ranks == {"A": 1, "B": 1}

    third = run(ranks, {"A": 9.0, "B": 8.5})
    assert third == PromotionResult(1, ("A", "B"), ("A",), "highest_score")
    ranks = apply_promotion(ranks, third)
    assert ranks == {"A": 2, "B": 1}


# Ties and single agents


def test_ties_within_1e_9_all_promote() -> None:
    """0.1 + 0.2 and 0.3 are equal after rounding to 1e-9: both agents promote."""
    result = run({}, {"A": 0.1 + 0.2, "B": 0.3, "C": 0.2})
    assert result.promoted == ("A", "B")
    assert result.reason == "tie"


def test_scores_1e_8_apart_are_not_tied() -> None:
    """Scores that differ in the 8th decimal are distinct: only the higher promotes."""
    assert run({}, {"A": 7.00000001, "B": 7.0}).promoted == ("A",)


def test_a_three_way_tie_promotes_all_three() -> None:
    """Every tied top scorer promotes, however many there are."""
    assert run({}, {"A": 5.0, "B": 5.0, "C": 5.0, "D": 4.0}).promoted == ("A", "B", "C")


def test_single_agent_in_floor_auto_promotes() -> None:
    """The only scored member of the floor group promotes even against higher scorers above."""
    result = run({"A": 0, "B": 1}, {"A": 1.0, "B": 9.9})
    assert result == PromotionResult(0, ("A",), ("A",), "single_agent")


def test_single_agent_deliberation_auto_promotes() -> None:
    """A deliberation of one scored agent promotes it."""
    assert run({"A": 4}, {"A": 0.0}).promoted == ("A",)


# No scores


def test_an_agent_without_score_never_wins() -> None:
    """An agent with no scored proposal cannot win, even against a score of 0."""
    result = run({}, {"A": None, "B": 0.0})
    assert result.promoted == ("B",)
    assert result.floor_group == ("A", "B")


def test_single_floor_agent_without_score_does_not_auto_promote() -> None:
    """A lone floor agent with no score promotes nobody, even when higher groups scored."""
    result = run({"A": 0, "B": 1, "C": 1}, {"A": None, "B": 9.0, "C": 8.0})
    assert result == PromotionResult(0, ("A",), (), "no_scores")


def test_floor_group_without_scores_promotes_nobody() -> None:
    """A floor group in which nobody scored promotes nobody; higher groups stay unaffected."""
    result = run({"A": 0, "B": 0, "C": 2}, {"A": None, "B": None, "C": 10.0})
    assert result == PromotionResult(0, ("A", "B"), (), "no_scores")
    assert apply_promotion({"A": 0, "B": 0, "C": 2}, result) == {"A": 0, "B": 0, "C": 2}


def test_no_participants_promote_nobody() -> None:
    """An empty deliberation promotes nobody and has no floor."""
    assert promote([]) == PromotionResult(None, (), (), "no_participants")


# apply_promotion


def test_apply_promotion_adds_one_to_the_promoted_only() -> None:
    """Only promoted agents change, by exactly +1; missing agents start at 0."""
    result = PromotionResult(0, ("A", "C"), ("A", "C"), "tie")
    assert apply_promotion({"A": 0, "B": 3}, result) == {"A": 1, "B": 3, "C": 1}


def test_apply_promotion_refuses_to_apply_twice() -> None:
    """Applying a result to ranks where the winner is no longer at the floor is refused."""
    result = run({}, {"A": 1.0, "B": 2.0})
    once = apply_promotion({}, result)
    with pytest.raises(InvalidInput) as caught:
        apply_promotion(once, result)
    assert caught.value.field == "ranks[B]"
    assert caught.value.value == 1


def test_apply_promotion_refuses_negative_ranks() -> None:
    """A negative rank in the input mapping is refused naming the agent and the value."""
    with pytest.raises(InvalidInput) as caught:
        apply_promotion({"A": -1}, PromotionResult(None, (), (), "no_participants"))
    assert caught.value.field == "ranks[A]"
    assert "-1" in str(caught.value)


# Bad input


def test_the_same_agent_twice_is_refused() -> None:
    """The same agent twice in one deliberation raises InvalidInput naming it."""
    with pytest.raises(InvalidInput) as caught:
        promote([Participant("A", 0, 1.0), Participant("B", 0, 2.0), Participant("A", 1, 3.0)])
    assert caught.value.field == "participants"
    assert caught.value.value == "A"
    assert "'A'" in str(caught.value)


@pytest.mark.parametrize("score", [math.nan, math.inf, -math.inf, -0.5, 10.000001, 11.0])
def test_bad_scores_are_refused_naming_field_and_value(score: float) -> None:
    """NaN, infinite, negative or above-10 scores raise InvalidInput on 'score'."""
    with pytest.raises(InvalidInput) as caught:
        Participant("A", 0, score)
    assert caught.value.field == "score"
    assert repr(score) in str(caught.value)
    assert "'A'" in str(caught.value)


@pytest.mark.parametrize("rank", [-1, True, 1.0])
def test_bad_ranks_are_refused_naming_field_and_value(rank: object) -> None:
    """A negative or non-int rank raises InvalidInput on 'rank'."""
    with pytest.raises(InvalidInput) as caught:
        Participant("A", rank, 1.0)  # type: ignore[arg-type]
    assert caught.value.field == "rank"
    assert repr(rank) in str(caught.value)


@pytest.mark.parametrize("agent_id", ["", "a b", "..", "../x"])
def test_bad_agent_ids_are_refused(agent_id: str) -> None:
    """A participant's agent_id must be a valid agent name."""
    with pytest.raises(InvalidInput) as caught:
        Participant(agent_id, 0, 1.0)
    assert caught.value.field == "agent_id"
    assert repr(agent_id) in str(caught.value)


# Properties

_ids = st.text(alphabet="ABCDEFGH", min_size=1, max_size=2)
_scores = st.one_of(st.none(), st.floats(min_value=0, max_value=10), st.sampled_from([5.0, 7.5]))
_deliberations = st.dictionaries(
    _ids, st.tuples(st.integers(min_value=0, max_value=4), _scores), max_size=8
)


def _participants(d: dict[str, tuple[int, float | None]]) -> list[Participant]:
    return [Participant(a, rank, score) for a, (rank, score) in d.items()]


@given(_deliberations)
def test_rank_never_decreases_and_only_floor_members_change(
    d: dict[str, tuple[int, float | None]],
) -> None:
    """After applying a promotion, no rank decreases and only floor members gain exactly 1."""
    ranks = {a: rank for a, (rank, _) in d.items()}
    result = promote(_participants(d))
    new = apply_promotion(ranks, result)
    assert new.keys() == ranks.keys()
    for agent_id, rank in ranks.items():
        assert new[agent_id] >= rank
        if new[agent_id] != rank:
            assert rank == result.floor_rank
            assert new[agent_id] == rank + 1


@given(_deliberations)
def test_promoted_are_scored_top_members_of_the_floor(
    d: dict[str, tuple[int, float | None]],
) -> None:
    """Promoted agents are floor members with a score, and all have the top floor score."""
    result = promote(_participants(d))
    if not d:
        assert result.floor_rank is None
        return
    floor_rank = min(rank for rank, _ in d.values())
    assert result.floor_rank == floor_rank
    assert result.floor_group == tuple(sorted(a for a, (r, _) in d.items() if r == floor_rank))
    assert set(result.promoted) <= set(result.floor_group)
    scored = {a: round(s, 9) for a in result.floor_group if (s := d[a][1]) is not None}
    assert bool(result.promoted) == bool(scored)
    if scored:
        top = max(scored.values())
        assert result.promoted == tuple(a for a in result.floor_group if scored.get(a) == top)


@given(_deliberations, st.randoms(use_true_random=False))
def test_promote_is_deterministic_and_order_independent(
    d: dict[str, tuple[int, float | None]], rng: random.Random
) -> None:
    """Promoting the same participants in any order gives the same result."""
    participants = _participants(d)
    shuffled = list(participants)
    rng.shuffle(shuffled)
    assert promote(participants) == promote(shuffled) == promote(tuple(participants))
