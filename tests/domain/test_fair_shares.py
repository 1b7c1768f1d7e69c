"""Each caller's bounds from its role and token, and the settings that contradict them."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from pydantic import ValidationError

from agentladder.domain.fair_shares import (
    CallerLimits,
    RoleTable,
    caller_limits,
    share_problems,
)

MIB = 1024 * 1024


@dataclass(frozen=True)
class Token:
    """A token's own bounds (as TokenSettings holds them)."""

    role: str = "client"
    max_in_flight: int | None = None
    rate_per_s: float | None = None
    burst: int | None = None


def test_the_defaults_bound_clients_only() -> None:
    """By default clients are bounded in flight, rate and bytes; agents less; others not."""
    roles = RoleTable()
    assert caller_limits(roles.client) == CallerLimits(32, 50.0, 100)
    assert caller_limits(roles.agent) == CallerLimits(256, None, 1)
    assert caller_limits(roles.orchestrator) == CallerLimits(None, None, 1)
    assert caller_limits(roles.admin) == CallerLimits(None, None, 1)
    assert (roles.client.max_buffered_share, roles.agent.max_buffered_share) == (0.75, 0.5)
    assert roles.orchestrator.max_buffered_share == roles.admin.max_buffered_share == 1.0


def test_a_role_set_in_part_keeps_its_other_defaults() -> None:
    """A role given one key keeps its other defaults (a client's rate, burst, share)."""
    roles = RoleTable.model_validate({"client": {"max_in_flight": 4}})
    assert caller_limits(roles.client) == CallerLimits(4, 50.0, 100)
    assert roles.client.max_buffered_share == 0.75


def test_a_token_overrides_its_role() -> None:
    """A token's own in-flight bound, rate and burst win over its role's."""
    client = RoleTable().client
    assert caller_limits(client, Token(max_in_flight=2)) == CallerLimits(2, 50.0, 100)
    assert caller_limits(client, Token(rate_per_s=2.5)) == CallerLimits(32, 2.5, 3)
    assert caller_limits(client, Token(rate_per_s=100, burst=500)) == CallerLimits(32, 100, 500)
    assert caller_limits(client, Token(burst=5)) == CallerLimits(32, 50.0, 5)
    judge = RoleTable().orchestrator
    assert caller_limits(judge, Token("orchestrator", rate_per_s=50)) == CallerLimits(None, 50, 50)


def test_a_role_burst_without_a_rate_is_refused() -> None:
    """A role's burst without rate_per_s is refused, saying why."""
    with pytest.raises(ValidationError, match="burst needs rate_per_s"):
        RoleTable.model_validate({"admin": {"burst": 5}})


def _problems(
    total: int = 32 * MIB, per_token: float = 0.5, roles: RoleTable | None = None,
    tokens: tuple[Token, ...] = (), gateway: int = 16 * MIB,
) -> list[tuple[str, object]]:  # fmt: skip
    found = share_problems(total, per_token, roles or RoleTable(), tokens, MIB, gateway)
    return [(problem.field, problem.value) for problem in found]


def test_the_defaults_hold_together() -> None:
    """The default shares, rates and body sizes contradict nothing."""
    assert _problems() == []


def test_a_token_share_under_the_largest_body_is_refused() -> None:
    """A token's share under a gateway body is refused, naming the key and value."""
    assert _problems(per_token=0.4) == [("api.max_buffered_share_per_token", 0.4)]
    found = share_problems(32 * MIB, 0.4, RoleTable(), (), MIB, 16 * MIB)
    assert "13421772 of api.max_buffered_bytes (33554432)" in str(found[0])


def test_a_role_share_under_its_largest_body_is_refused() -> None:
    """A role's share under the largest body its tokens may send is refused."""
    roles = RoleTable.model_validate({"client": {"max_buffered_share": 0.25},
                                      "agent": {"max_buffered_share": 0.01}})  # fmt: skip
    assert _problems(roles=roles) == [
        ("api.roles.agent.max_buffered_share", 0.01),
        ("api.roles.client.max_buffered_share", 0.25),
    ]


def test_clients_must_leave_room_for_the_other_roles() -> None:
    """A client share leaving less than one API body to the other roles is refused."""
    roles = RoleTable.model_validate({"client": {"max_buffered_share": 1.0}})
    assert _problems(roles=roles) == [("api.roles.client.max_buffered_share", 1.0)]


def test_a_token_burst_without_any_rate_is_refused() -> None:
    """A token's burst with no rate on it or its role is refused, named by index."""
    tokens = (Token(), Token("orchestrator", burst=5), Token("client", burst=5))
    assert _problems(tokens=tokens) == [("api.tokens[1].burst", 5)]
