"""Faults land on whoever failed: each agent answers for its own calls; an unscored
proposal is not its author's failure; the promotion is explained, nobody's too."""

from __future__ import annotations

from agentladder.domain.attribution import (
    JudgmentCall,
    Verdict,
    explain_promotion,
    judgment_of,
    outcomes,
)
from agentladder.domain.deliberation_record import EvaluationRecord, ProposalRecord, RoundRecord
from agentladder.domain.promotion import Participant, promote


def proposal(
    author: str, score: float | None, evaluations: dict[str, float | str]
) -> ProposalRecord:
    """A delivered proposal scored ``score``; each evaluation a score or an error."""
    return ProposalRecord(
        agent_id=author, content="an answer", aggregated_score=score,
        evaluations=[
            EvaluationRecord(evaluator=e, score=v) if isinstance(v, float)
            else EvaluationRecord(evaluator=e, error=v)
            for e, v in evaluations.items()
        ],
    )  # fmt: skip


def failed(author: str, error: str) -> ProposalRecord:
    """A proposal the author did not deliver."""
    return ProposalRecord(agent_id=author, error=error, attempts=4)


def test_an_author_whose_evaluators_all_failed_is_unscored_and_not_judged() -> None:
    """slow's proposal was scored by nobody (malformed's evaluation failed): unscored, no
    judgment, whatever the minimum score; malformed failed its own calls: failed."""
    rounds = [
        RoundRecord(
            number=1,
            proposals=[
                proposal("slow", None, {"malformed": "unparseable: not JSON"}),
                failed("malformed", "unparseable: not JSON: '<html>'"),
            ],
        )
    ]
    found = outcomes(["slow", "malformed"], rounds, {"slow": None, "malformed": None}, 5.0)
    assert found["slow"].verdict is Verdict.UNSCORED
    assert found["slow"].judgment is JudgmentCall.NONE
    assert (found["slow"].proposals, found["slow"].proposals_unscored) == (1, 1)
    assert "every evaluator failed (malformed)" in found["slow"].detail
    bad = found["malformed"]
    assert (bad.verdict, bad.judgment) == (Verdict.FAILED, JudgmentCall.FAILED)
    assert (bad.proposals_failed, bad.evaluations, bad.evaluations_failed) == (1, 1, 1)
    assert "1 of its 1 proposals failed (unparseable" in bad.detail
    assert "1 of its 1 evaluations failed" in bad.detail


def test_a_failed_evaluation_is_the_evaluators_not_the_authors() -> None:
    """a is scored by b (8) though c's evaluation of it failed: a scored and judged a
    success; c failed (its evaluation), whatever its own proposal's score."""
    rounds = [
        RoundRecord(
            number=1,
            proposals=[
                proposal("a", 8.0, {"b": 8.0, "c": "timeout: no answer within 5 s"}),
                proposal("b", 6.0, {"a": 6.0, "c": 6.0}),
                proposal("c", 7.0, {"a": 7.0, "b": 7.0}),
            ],
        )
    ]
    found = outcomes(["a", "b", "c"], rounds, {"a": 8.0, "b": 6.0, "c": 7.0})
    assert found["a"].judgment is JudgmentCall.SUCCESS
    assert found["b"].judgment is JudgmentCall.SUCCESS
    assert found["c"].verdict is Verdict.FAILED
    assert (found["c"].evaluations, found["c"].evaluations_failed) == (2, 1)
    assert "timeout" in found["c"].detail


def test_the_minimum_score_fails_a_scored_agent_under_it_only() -> None:
    """judgment_of: failed stays failed; unscored is not judged; scored under the minimum
    fails, at or over it succeeds; no minimum: any score succeeds."""
    assert judgment_of(Verdict.FAILED, 9.0, None) is JudgmentCall.FAILED
    assert judgment_of(Verdict.UNSCORED, None, 5.0) is JudgmentCall.NONE
    assert judgment_of(Verdict.SCORED, 4.9, 5.0) is JudgmentCall.FAILED
    assert judgment_of(Verdict.SCORED, 5.0, 5.0) is JudgmentCall.SUCCESS
    assert judgment_of(Verdict.SCORED, 0.5, None) is JudgmentCall.SUCCESS


def test_a_reported_proposal_without_a_score_is_the_agents_failure() -> None:
    """A report carries no content nor errors: a proposal reported unscored is taken as
    not delivered (as such reports were always judged)."""
    rounds = [
        RoundRecord(
            number=1,
            proposals=[
                ProposalRecord(agent_id="x"),
                ProposalRecord(agent_id="y", aggregated_score=7.0),
            ],
        )
    ]
    found = outcomes(["x", "y"], rounds, {"x": None, "y": 7.0})
    assert found["x"].judgment is JudgmentCall.FAILED
    assert found["y"].judgment is JudgmentCall.SUCCESS


def test_nobody_promoted_is_explained_with_each_floor_agents_part() -> None:
    """A floor group in which nobody scored promotes nobody (the seed's rule, kept), and
    the explanation names the group and why each of them has no score."""
    rounds = [
        RoundRecord(
            number=1,
            proposals=[
                proposal("slow", None, {"malformed": "unparseable: not JSON"}),
                failed("malformed", "unparseable: not JSON"),
            ],
        )
    ]
    found = outcomes(["slow", "malformed"], rounds, {"slow": None, "malformed": None})
    result = promote([Participant("slow", 0, None), Participant("malformed", 0, None)])
    assert result.promoted == ()
    text = explain_promotion(result, found)
    assert text.startswith("nobody promoted: nobody in the floor group (rank 0: malformed, slow)")
    assert "slow: unscored" in text
    assert "malformed: failed" in text
    assert "promotes nobody" in text


def test_a_promotion_is_explained_too() -> None:
    """The winner, a tie and a single agent each say so, naming the floor group."""
    winner = promote([Participant("a", 0, 8.0), Participant("b", 0, 6.0), Participant("c", 1, 9.0)])
    assert explain_promotion(winner) == (
        "the floor group (rank 0: a, b) competed: a had the highest score"
    )
    tie = promote([Participant("a", 0, 7.0), Participant("b", 0, 7.0)])
    assert "a, b tied with the highest score" in explain_promotion(tie)
    alone = promote([Participant("a", 0, 3.0), Participant("b", 2, 9.0)])
    assert explain_promotion(alone).endswith("promoted alone")
