"""Deliberation requests and the minimum-rank filter, with the other exclusions."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from agentladder.domain.deliberation import (
    MAX_QUERY_BYTES,
    DeliberationRequest,
    ExclusionReason,
    Scope,
    down_detail,
    select_agents,
)


def request(**fields: Any) -> DeliberationRequest:
    values: dict[str, Any] = {
        "user_query": "Is this contract compliant?",
        "agent_names": ["a", "b", "c"],
    }
    values.update(fields)
    return DeliberationRequest(**values)


def test_the_specification_request_parses_with_defaults() -> None:
    """The spec's POST /deliberation body parses; scope standard and rank 0 by default."""
    parsed = request(min_agent_rank=3, scope="standard")
    assert parsed.min_agent_rank == 3
    assert parsed.scope is Scope.STANDARD
    assert request().min_agent_rank == 0


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("user_query", ""),
        ("user_query", "   "),
        ("user_query", "x" * (MAX_QUERY_BYTES + 1)),
        ("user_query", "é" * (MAX_QUERY_BYTES // 2 + 1)),
        ("agent_names", ["a"]),
        ("agent_names", ["a", "a"]),
        ("agent_names", ["a", "../b"]),
        ("min_agent_rank", -1),
        ("scope", "forever"),
        ("task_type", "Bad Type"),
        ("complexity", "galactic"),
    ],
)
def test_bad_requests_name_the_field(field: str, value: object) -> None:
    """Blank or over-32-KiB queries, <2 or repeated agents, bad names, ranks, scopes."""
    with pytest.raises(ValidationError) as caught:
        request(**{field: value})
    assert field in str(caught.value)


def test_query_of_exactly_32_kib_is_accepted() -> None:
    """32,768 bytes is the limit, inclusive."""
    assert len(request(user_query="x" * MAX_QUERY_BYTES).user_query) == MAX_QUERY_BYTES


def test_min_rank_excludes_unproven_agents_with_their_rank() -> None:
    """Agents below min_agent_rank are excluded, listed with rank and reason."""
    selection = select_agents(
        request(min_agent_rank=3, agent_names=["a", "b", "c"]),
        online={"a": True, "b": True, "c": True},
        ranks={"a": 3, "b": 5, "c": 1},
    )
    assert selection.qualified == ("a", "b")
    assert [(e.agent_id, e.rank, e.reason) for e in selection.excluded] == [
        ("c", 1, ExclusionReason.BELOW_MIN_RANK)
    ]
    assert selection.enough


def test_unknown_offline_and_complexity_exclusions_in_order() -> None:
    """Unknown before offline before rank before complexity; fewer than two is not enough."""
    selection = select_agents(
        request(agent_names=["ghost", "sleepy", "rookie", "pro"], complexity="complex"),
        online={"sleepy": False, "rookie": True, "pro": True},
        ranks={"pro": 4},
        allowed={"rookie": False, "pro": True},
    )
    assert selection.qualified == ("pro",)
    assert [(e.agent_id, e.reason) for e in selection.excluded] == [
        ("ghost", ExclusionReason.UNKNOWN),
        ("sleepy", ExclusionReason.OFFLINE),
        ("rookie", ExclusionReason.COMPLEXITY_NOT_ALLOWED),
    ]
    assert not selection.enough


def test_a_down_agent_is_left_out_with_its_health_and_until_when() -> None:
    """Down comes after unreachable and before rank; its detail says why and until when;
    a pinned agent (no end) is down until the service restarts."""
    detail = down_detail("the provider asked to retry after 30 s", 1_796_652_192.0, 1_796_652_164.2)
    assert detail == (
        "down until 2026-12-07 14:03:12 UTC (in 28 s): the provider asked to retry after 30 s"
    )
    assert down_detail("API key missing", None, 0.0) == (
        "down until the service restarts: API key missing"
    )
    selection = select_agents(
        request(agent_names=["far", "limited", "low", "a", "b"], min_agent_rank=1),
        online={"far": True, "limited": True, "low": True, "a": True, "b": True},
        ranks={"a": 1, "b": 2},
        reachable={"far": False},
        down={"far": "down until ...", "limited": detail, "low": "down until ..."},
    )
    assert selection.qualified == ("a", "b")
    assert [(e.agent_id, e.reason, e.detail) for e in selection.excluded] == [
        ("far", ExclusionReason.UNREACHABLE, None),
        ("limited", ExclusionReason.DOWN, detail),
        ("low", ExclusionReason.DOWN, "down until ..."),
    ]
