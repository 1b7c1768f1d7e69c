"""Fair shares of the bytes of request bodies a server buffers, by caller and by role.

The bodies being received by all requests together hold at most ``total`` bytes; those
of one caller (one token) at most ``per_token``; those of all the callers of one role
together at most that role's figure. ``BufferShares.admit`` counts a body's next bytes
when every bound keeps them, and otherwise names the first bound they would pass (the
caller's own, then its role's, then the total), counting nothing; ``release`` gives
bytes back when their request is done with them. A role without a figure is bounded by
the total only. ``share_bytes`` turns a configured share into bytes.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from typing import Literal

__all__ = ["BufferShares", "Passed", "share_bytes"]

Passed = Literal["token", "role", "total"]
"""The bound a body's bytes would pass."""


def share_bytes(total: int, share: float) -> int:
    """The whole bytes of ``share`` (0 to 1) of ``total``, rounded down."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"share must be between 0 and 1, not {share!r}")
    return math.floor(total * share)


class BufferShares:
    """The bytes buffered now, in total, per caller and per role, within their bounds."""

    def __init__(self, total: int, per_token: int, per_role: Mapping[str, int]) -> None:
        self.total = total
        self.per_token = per_token
        self.per_role = dict(per_role)
        self.held = 0
        self.by_token: dict[Hashable, int] = {}
        self.by_role: dict[str, int] = {}

    def admit(self, token: Hashable, role: str, size: int) -> Passed | None:
        """Count ``size`` more bytes of ``token``'s (of ``role``) body, if they fit; else
        the bound they would pass, nothing counted."""
        mine = self.by_token.get(token, 0) + size
        if mine > self.per_token:
            return "token"
        theirs = self.by_role.get(role, 0) + size
        if theirs > self.per_role.get(role, self.total):
            return "role"
        if self.held + size > self.total:
            return "total"
        self.held += size
        self.by_token[token] = mine
        self.by_role[role] = theirs
        return None

    def release(self, token: Hashable, role: str, size: int) -> None:
        """Give back ``size`` bytes counted for ``token`` (of ``role``)."""
        if size <= 0:
            return
        self.held -= size
        left = self.by_token.get(token, 0) - size
        if left > 0:
            self.by_token[token] = left
        else:
            self.by_token.pop(token, None)
        rest = self.by_role.get(role, 0) - size
        if rest > 0:
            self.by_role[role] = rest
        else:
            self.by_role.pop(role, None)
