"""Shares of the buffered bytes: per token, per role, in total, exactly."""

from __future__ import annotations

import pytest

from agentladder.domain.buffer_shares import BufferShares, share_bytes

MIB = 1024 * 1024


def _shares() -> BufferShares:
    """The defaults over 32 MiB: 16 MiB a token, 24 MiB for clients, 16 MiB for agents."""
    return BufferShares(32 * MIB, 16 * MIB, {"client": 24 * MIB, "agent": 16 * MIB})


def test_share_bytes_rounds_down() -> None:
    """A share of a byte count is whole bytes, rounded down."""
    assert share_bytes(32 * MIB, 0.5) == 16 * MIB
    assert share_bytes(10, 1 / 3) == 3
    assert share_bytes(10, 0.0) == 0
    assert share_bytes(10, 1.0) == 10


@pytest.mark.parametrize("share", [-0.1, 1.5])
def test_share_bytes_refuses_a_share_outside_0_to_1(share: float) -> None:
    """A share under 0 or over 1: ValueError naming it."""
    with pytest.raises(ValueError, match="share"):
        share_bytes(10, share)


def test_one_token_holds_its_share_and_no_more() -> None:
    """A token's 16 MiB fit; one byte more passes its share and is not counted."""
    shares = _shares()
    assert shares.admit("a", "client", 16 * MIB) is None
    assert shares.admit("a", "client", 1) == "token"
    assert (shares.held, shares.by_token["a"], shares.by_role["client"]) == (16 * MIB,) * 3


def test_the_clients_together_hold_their_role_share() -> None:
    """Client tokens together hold 24 MiB and no more; a judge's write fits in the rest."""
    shares = _shares()
    assert shares.admit("a", "client", 16 * MIB) is None
    assert shares.admit("b", "client", 8 * MIB) is None
    assert shares.admit("b", "client", 1) == "role"
    assert shares.admit("judge", "orchestrator", 1 * MIB) is None
    assert shares.held == 25 * MIB


def test_the_total_bounds_every_role() -> None:
    """Roles without a share of their own are bounded by the total, named past it."""
    shares = _shares()
    assert shares.admit("a", "client", 16 * MIB) is None
    assert shares.admit("o1", "orchestrator", 16 * MIB) is None
    assert shares.admit("o2", "orchestrator", 1) == "total"
    assert shares.held == 32 * MIB


def test_released_bytes_are_room_again() -> None:
    """Bytes given back are room again for the same token and role; nothing kept at 0."""
    shares = _shares()
    shares.admit("a", "client", 16 * MIB)
    shares.release("a", "client", 16 * MIB)
    assert (shares.held, shares.by_token, shares.by_role) == (0, {}, {})
    assert shares.admit("a", "client", 16 * MIB) is None
    shares.release("a", "client", 0)
    assert shares.held == 16 * MIB
