"""Peer-score aggregation and deliberation scores."""

from __future__ import annotations

import math
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentladder.domain.scoring import (
    aggregate_peer_scores,
    deliberation_score,
    deliberation_scores,
    scored_round_counts,
)
from agentladder.errors import InvalidInput

_score = st.floats(min_value=0, max_value=10)

# aggregate_peer_scores


def test_aggregate_is_the_mean_of_peer_scores() -> None:
    """With fewer than 4 peers, the aggregated score is the plain mean of their scores."""
    assert aggregate_peer_scores("A", {"B": 6.0, "C": 8.0, "D": 7.0}) == 7.0


def test_the_authors_own_score_is_ignored() -> None:
    """The author scoring its own proposal does not count."""
    assert aggregate_peer_scores("A", {"A": 10.0, "B": 6.0, "C": 8.0}) == 7.0


def test_with_four_peers_highest_and_lowest_are_dropped() -> None:
    """With 4 peers, the single highest and single lowest are dropped before the mean."""
    assert aggregate_peer_scores("A", {"B": 0.0, "C": 6.0, "D": 8.0, "E": 10.0}) == 7.0


def test_only_one_copy_of_a_repeated_extreme_is_dropped() -> None:
    """When several peers give the top score, only one of them is dropped."""
    scores = {"B": 9.0, "C": 9.0, "D": 9.0, "E": 3.0, "F": 6.0}
    assert aggregate_peer_scores("A", scores) == 8.0


def test_the_author_does_not_count_towards_the_four() -> None:
    """3 peers plus the author is not 4 evaluators: nothing is dropped."""
    assert aggregate_peer_scores("A", {"A": 1.0, "B": 0.0, "C": 6.0, "D": 9.0}) == 5.0


@pytest.mark.parametrize("evaluations", [{}, {"A": 9.0}])
def test_no_peer_score_gives_none(evaluations: dict[str, float]) -> None:
    """Without any peer score the proposal has no aggregated score."""
    assert aggregate_peer_scores("A", evaluations) is None


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, -1.0, 10.5])
@pytest.mark.parametrize("evaluator", ["B", "A"])
def test_bad_evaluation_scores_are_refused_naming_the_evaluator(evaluator: str, bad: float) -> None:
    """A NaN, infinite or out-of-range score is refused naming the evaluator, the author's too."""
    with pytest.raises(InvalidInput) as caught:
        aggregate_peer_scores("A", {"C": 5.0, evaluator: bad})
    assert caught.value.field == f"evaluations[{evaluator}]"
    assert repr(bad) in str(caught.value)


@given(st.dictionaries(st.text(alphabet="ABCDEFG", min_size=1), _score, min_size=1))
def test_aggregate_lies_within_the_peer_scores(evaluations: dict[str, float]) -> None:
    """The aggregated score is between the lowest and highest peer score."""
    peers = [s for e, s in evaluations.items() if e != "A"]
    result = aggregate_peer_scores("A", evaluations)
    if not peers:
        assert result is None
    else:
        assert result is not None
        assert min(peers) <= result <= max(peers)


@given(st.lists(_score, min_size=4, max_size=9))
def test_trimmed_mean_matches_a_reference(scores: list[float]) -> None:
    """With 4+ peers the result equals the mean of the sorted scores without both ends."""
    evaluations = {f"e{i}": s for i, s in enumerate(scores)}
    reference = statistics.fmean(sorted(scores)[1:-1])
    assert aggregate_peer_scores("author", evaluations) == reference
    reordered = dict(reversed(evaluations.items()))
    assert aggregate_peer_scores("author", reordered) == reference


# deliberation_score(s)


def test_deliberation_score_is_the_mean_of_scored_proposals() -> None:
    """Proposals without an aggregated score are left out of the mean."""
    assert deliberation_score([8.0, None, 6.0]) == 7.0


def test_deliberation_score_is_none_without_scored_proposals() -> None:
    """An agent whose proposals all failed has no deliberation score."""
    assert deliberation_score([None, None]) is None
    assert deliberation_score([]) is None


def test_deliberation_score_refuses_bad_scores_naming_the_position() -> None:
    """A bad aggregated score is refused naming its position and value."""
    with pytest.raises(InvalidInput) as caught:
        deliberation_score([5.0, None, math.nan])
    assert caught.value.field == "aggregated_scores[2]"
    assert "nan" in str(caught.value)


def test_deliberation_scores_over_rounds() -> None:
    """Per agent, the mean over the rounds it was scored in; None if never scored."""
    rounds = [
        {"A": 7.0, "B": None, "C": 5.0},
        {"A": 9.0, "B": None},
        {"A": None, "B": None, "C": 7.0, "D": 4.0},
    ]
    assert deliberation_scores(rounds) == {"A": 8.0, "B": None, "C": 6.0, "D": 4.0}
    assert scored_round_counts(rounds) == {"A": 2, "B": 0, "C": 2, "D": 1}


def test_deliberation_scores_of_no_rounds_is_empty() -> None:
    """No rounds, no agents."""
    assert deliberation_scores([]) == {}
    assert scored_round_counts([]) == {}


@pytest.mark.parametrize("bad", [math.inf, -0.1, 10.1])
def test_deliberation_scores_refuse_bad_scores_naming_round_and_agent(bad: float) -> None:
    """A bad score in a round is refused naming the round, the agent and the value."""
    with pytest.raises(InvalidInput) as caught:
        deliberation_scores([{"A": 1.0}, {"A": 2.0, "B": bad}])
    assert caught.value.field == "rounds[1][B]"
    assert repr(bad) in str(caught.value)


@given(st.lists(st.dictionaries(st.sampled_from("ABCD"), st.none() | _score), max_size=4))
def test_deliberation_scores_agree_with_deliberation_score(
    rounds: list[dict[str, float | None]],
) -> None:
    """deliberation_scores is deliberation_score applied to each agent's column."""
    result = deliberation_scores(rounds)
    assert set(result) == {a for r in rounds for a in r}
    for agent_id, score in result.items():
        assert score == deliberation_score([r.get(agent_id) for r in rounds])
