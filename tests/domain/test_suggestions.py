"""Did you mean: the closest known names to one typed, and the one phrase offering them."""

from __future__ import annotations

from agentladder.domain.routing.warnings import no_evidence
from agentladder.domain.suggestions import (
    FULL_SCAN,
    MAX_TYPED,
    Names,
    closest,
    did_you_mean,
    hint,
)


def test_one_or_two_letters_off_is_suggested_closest_first() -> None:
    """A swap, a missing letter, a case slip: the known name; far names are not offered."""
    assert closest("ehco", ["echo", "alpha", "bravo"]) == ["echo"]
    assert closest("fxtrot", ["foxtrot", "fox", "bravo"]) == ["foxtrot"]
    assert closest("code_reveiw", ["code_review", "summarization"]) == ["code_review"]
    assert closest("Echo", ["echo"]) == ["echo"]
    assert closest("sim_aa", ["sim_a", "sim_ab", "other"]) == ["sim_a", "sim_ab"]
    assert closest("ghost", ["sim_a", "sim_b"]) == []


def test_the_typed_name_itself_is_no_suggestion_and_at_most_three_are_given() -> None:
    """A known name is not offered for itself, a name known twice is offered once; four
    near names give three."""
    assert closest("echo", ["echo", "echo1"]) == ["echo1"]
    assert closest("rout:audit", ["route:audit", "route:audit"]) == ["route:audit"]
    assert len(closest("agent", ["agent1", "agent2", "agent3", "agent4"])) == 3


def test_the_phrase_is_one_form() -> None:
    """``did you mean X?``, ``X or Y``, nothing without a suggestion."""
    assert did_you_mean(["echo"]) == "did you mean echo?"
    assert did_you_mean(["echo", "echo2"]) == "did you mean echo or echo2?"
    assert did_you_mean([]) == ""
    assert hint("ehco", ["echo"]) == "did you mean echo?"


def test_routing_at_a_task_type_without_evidence_warns_with_the_closest_known() -> None:
    """A task type nobody was judged at: a warning that routing used predicted skill, with
    the closest known type; a known type and no task type: no warning."""
    warning = no_evidence("code_reveiw", {"code_review", "audit"})
    assert warning is not None
    assert warning.startswith("no agent has evidence at task type 'code_reveiw'")
    assert warning.endswith("; did you mean code_review?")
    assert no_evidence("code_review", {"code_review"}) is None
    assert no_evidence(None, set()) is None
    fresh = no_evidence("translation", {"audit"})
    assert fresh is not None
    assert "did you mean" not in fresh


def test_a_large_fleet_is_searched_beside_the_name_and_finds_the_typo() -> None:
    """Past FULL_SCAN names the index compares only those beside the typed name (sorted
    forwards and reversed): a typo at the end, in the middle or at the start is found;
    a hostile name past MAX_TYPED gets nothing."""
    names = Names(f"agent_{i:06d}" for i in range(FULL_SCAN * 5))
    assert len(names) == FULL_SCAN * 5
    near = names.closest("agent_00234x")
    assert len(near) == 3
    assert all(n.startswith("agent_0023") for n in near)
    assert names.closest("agnet_002345")[0] == "agent_002345"
    assert "agent_002345" in names.closest("xgent_002345")
    assert names.closest("a" * (MAX_TYPED + 1)) == []


def test_an_index_holds_its_names_exactly_and_warns_as_the_names_do() -> None:
    """``in`` an index is exact (case counts: ``Echo`` is not ``echo``); the routing
    warning reads an index as it reads the names."""
    index = Names(["echo", "code_review"])
    assert "echo" in index
    assert "Echo" not in index
    assert no_evidence("code_reveiw", index) == no_evidence("code_reveiw", ["code_review"])
    assert no_evidence("code_review", index) is None
