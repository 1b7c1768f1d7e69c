"""The prompts: what each section shows and when; evaluation replies read back exactly."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentladder.errors import ProviderError
from agentladder.providers.base import EvaluateRequest, PeerProposal, ProposeRequest
from agentladder.providers.prompts import (
    MAX_SHOWN_CHARS,
    evaluate_messages,
    parse_evaluation,
    propose_messages,
)

QUERY = "Summarise the audit risks of vendor prepayments."


def user_text(request: ProposeRequest) -> str:
    """The user message of a propose prompt."""
    system, user = propose_messages(request)
    assert (system["role"], user["role"]) == ("system", "user")
    return user["content"]


def test_first_round_prompt_shows_only_the_query() -> None:
    """Round 1 without examples or feedback: the query and the call to answer, nothing else."""
    text = user_text(ProposeRequest(deliberation_id="d", round=1, user_query=QUERY))
    assert QUERY in text
    for absent in ("round", "Example", "Feedback", "Task type"):
        assert absent not in text


def test_later_round_shows_previous_proposals_with_scores() -> None:
    """Round 2 shows each previous proposal with its agent id and score (or 'not scored')."""
    previous = (
        PeerProposal(agent_id="a", content="Answer A", aggregated_score=7.25),
        PeerProposal(agent_id="b", content="Answer B"),
    )
    request = ProposeRequest(deliberation_id="d", round=2, user_query=QUERY, previous=previous)
    text = user_text(request)
    assert "round 2" in text
    assert "--- a (score 7.25/10) ---\nAnswer A" in text
    assert "--- b (not scored) ---\nAnswer B" in text


def test_examples_feedback_and_task_type_are_shown_when_given() -> None:
    """Mentors' examples, self-correction feedback and the task type each get a section."""
    request = ProposeRequest(
        deliberation_id="d",
        round=1,
        user_query=QUERY,
        task_type="audit",
        examples=("Mentor answer one", "Mentor answer two"),
        feedback="You missed the FX risk.",
    )
    text = user_text(request)
    assert "Task type: audit" in text
    assert "Example 1:\nMentor answer one" in text
    assert "Example 2:\nMentor answer two" in text
    assert "You missed the FX risk." in text


def test_long_peer_proposals_are_cut() -> None:
    """A peer proposal longer than MAX_SHOWN_CHARS is cut with a marker."""
    long = PeerProposal(agent_id="a", content="x" * (MAX_SHOWN_CHARS + 500))
    request = ProposeRequest(deliberation_id="d", round=2, user_query=QUERY, previous=(long,))
    text = user_text(request)
    assert "x" * MAX_SHOWN_CHARS + " [...cut]" in text
    assert "x" * (MAX_SHOWN_CHARS + 1) not in text


def test_evaluate_prompt_delimits_the_proposal_and_asks_for_json() -> None:
    """The proposal is shown between markers, with the JSON reply format to use."""
    request = EvaluateRequest(deliberation_id="d", round=1, user_query=QUERY, proposal="P!")
    system, user = evaluate_messages(request)
    assert '"score"' in system["content"]
    assert QUERY in user["content"]
    assert "<<<\nP!\n>>>" in user["content"]
    assert '{"score": <0-10>, "rationale": "..."}' in user["content"]


@given(
    score=st.floats(min_value=0, max_value=10, allow_nan=False),
    rationale=st.text(max_size=40),
    before=st.sampled_from(["", "Sure.\n", "```json\n", "My review {draft}:\n"]),
    after=st.sampled_from(["", "\n```", "\nThanks!", " {}"]),
)
def test_any_valid_score_reads_back_exactly(
    score: float, rationale: str, before: str, after: str
) -> None:
    """A valid reply wrapped in prose or fences reads back to the same score and rationale."""
    reply = before + json.dumps({"score": score, "rationale": rationale}) + after
    assert parse_evaluation(reply) == (score, rationale)


@pytest.mark.parametrize(
    ("reply", "kind"),
    [("", "unparseable"), ("{", "unparseable"), ('{"score": 10.5}', "invalid")],
)
def test_bad_replies_are_classified(reply: str, kind: str) -> None:
    """No scored JSON object is 'unparseable'; a score outside 0..10 is 'invalid'."""
    with pytest.raises(ProviderError) as caught:
        parse_evaluation(reply)
    assert caught.value.kind == kind


def test_the_first_scored_object_counts() -> None:
    """Of two JSON objects with a score, the first one counts."""
    assert parse_evaluation('{"score": 3} {"score": 9}') == (3.0, "")
