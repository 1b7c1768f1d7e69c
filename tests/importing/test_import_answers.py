"""The pure rules of ``importing/answers.py``: which call's record names a sample's
answer, the agent part of a model name, a routed model name."""

from __future__ import annotations

from agentladder.importing.answers import agent_part, last_answer, routed_model
from agentladder.store.served import ServedRequest


def record(contract: str, agent: str) -> ServedRequest:
    return ServedRequest(contract_id=contract, agent_id=agent, caller="team-a", at=1.0)


def test_the_last_call_found_names_the_answer() -> None:
    """The last call with an id found wins (the scored output is the last answer); a
    call's ids are tried in order; none found: none."""
    first, last = record("gw-1", "alpha"), record("gw-2", "zeta")
    found = {"gw-1": first, "irid-2": last, "gw-9": record("gw-9", "beta")}
    assert last_answer([("gw-1", "irid-1"), ("gw-2", "irid-2")], found) == last
    assert last_answer([("gw-1",), ("gw-x", "irid-x")], found) == first
    assert last_answer([("gw-9", "gw-1")], found) == found["gw-9"]
    assert last_answer([], found) is None
    assert last_answer([("nothing",)], found) is None


def test_the_agent_part_of_a_model_name() -> None:
    """After the provider, when it is a valid agent id; none without a provider or when
    it is not one (a routing form's colon, a nested path)."""
    assert agent_part("openai/ace") == "ace"
    assert agent_part("anthropic/claude-3.5") == "claude-3.5"
    assert agent_part("ace") is None
    assert agent_part("openai/") is None
    assert agent_part("/ace") is None
    assert agent_part("openai/route:audit") is None
    assert agent_part("openrouter/meta/llama") is None


def test_routed_model_names() -> None:
    """``route`` and ``route:...`` after a provider."""
    assert routed_model("openai/route:audit")
    assert routed_model("openai/route")
    assert routed_model("openai/route:audit:cheapest_above@0.9")
    assert not routed_model("openai/router")
    assert not routed_model("route:audit")
    assert not routed_model("openai/alpha")
