"""``CallerBounds``: each caller's fair share of one server, kept by the request guard.

A caller is a token (the open-loopback caller, who has none, counts as one). Per
caller: the requests it has in flight, counted from the guard's first look at the
request until the ASGI ``send`` of the response's last body part (or the request's end:
a stream cut, the connection closed), at most its ``max_in_flight``; its rate, a token
bucket per token (``domain/token_bucket.py``); and the bytes of its bodies being
received, within its own share, its role's and the server's
(``domain/buffer_shares.py``). The bounds come from ``api.roles`` and the token's own
settings (``domain/fair_shares.py``). Past the in-flight bound or the rate a request is
refused 429 ``rate_limit_exceeded`` before its body is read; a refused request counts
against neither. Everything is per instance and in memory: several instances each
apply the bounds to what they receive.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from agentladder.api.auth import Caller
from agentladder.config import ApiSettings
from agentladder.domain.buffer_shares import BufferShares, share_bytes
from agentladder.domain.fair_shares import CallerLimits, RoleTable, caller_limits
from agentladder.domain.token_bucket import TokenBucket, reset_text, retry_after

__all__ = ["CallerBounds", "Entry", "Excess", "Passage"]

LOOPBACK = "open-loopback"
"""The key of the caller without a token (open-loopback mode: the loopback admin)."""


@dataclass(frozen=True)
class Excess:
    """A request refused by a bound: what to answer."""

    message: str
    retry_after_s: int
    headers: tuple[tuple[bytes, bytes], ...] = ()


@dataclass
class Passage:
    """A request let in: its caller's key and role, the headers its response carries."""

    key: Hashable
    role: str
    headers: tuple[tuple[bytes, bytes], ...]
    counted: bool
    """Whether it is counted in flight (until ``CallerBounds.leave``)."""


Entry = Passage | Excess


class CallerBounds:
    """Requests in flight, rates and buffered bytes per caller (the module says how)."""

    def __init__(self, api: ApiSettings, clock: Callable[[], float] = time.monotonic) -> None:
        self.roles: RoleTable = api.roles
        self.clock = clock
        total = api.max_buffered_bytes
        per_role = {
            name: share_bytes(total, self.roles.of(name).max_buffered_share)
            for name in RoleTable.model_fields
        }
        per_token = share_bytes(total, api.max_buffered_share_per_token)
        self.shares = BufferShares(total, per_token, per_role)
        self.in_flight: dict[Hashable, int] = {}
        self._limits: dict[Hashable, CallerLimits] = {}
        self._buckets: dict[Hashable, TokenBucket] = {}

    def _key(self, caller: Caller) -> Hashable:
        return LOOPBACK if caller.token is None else id(caller.token)

    def limits(self, caller: Caller) -> CallerLimits:
        """What holds for ``caller`` (an authenticated one)."""
        key = self._key(caller)
        found = self._limits.get(key)
        if found is None:
            role = self.roles.of(caller.role or "admin")
            found = self._limits[key] = caller_limits(role, caller.token)
        return found

    def enter(self, caller: Caller) -> Entry:
        """Let ``caller``'s request in, counting it, or say which bound it passes."""
        key, role = self._key(caller), caller.role or "admin"
        limits = self.limits(caller)
        held = self.in_flight.get(key, 0)
        if limits.max_in_flight is not None and held >= limits.max_in_flight:
            return Excess(
                f"this token has {held} requests in flight, as many as it may"
                f" (max_in_flight {limits.max_in_flight}): retry when one has ended",
                1,
            )
        headers: tuple[tuple[bytes, bytes], ...] = ()
        if limits.rate_per_s is not None:
            bucket = self._buckets.get(key)
            if bucket is None:
                bucket = self._buckets[key] = TokenBucket(
                    limits.rate_per_s, limits.burst, self.clock()
                )
            took = bucket.take(self.clock())
            headers = (
                (b"x-ratelimit-limit-requests", str(limits.burst).encode()),
                (b"x-ratelimit-remaining-requests", str(took.remaining).encode()),
                (b"x-ratelimit-reset-requests", reset_text(took.full_s).encode()),
            )
            if not took.allowed:
                return Excess(
                    f"this token made its {limits.burst} requests at once, and may make"
                    f" {limits.rate_per_s:g} a second (rate_per_s): retry later",
                    retry_after(took.wait_s), headers,
                )  # fmt: skip
        counted = limits.max_in_flight is not None
        if counted:
            self.in_flight[key] = held + 1
        return Passage(key, role, headers, counted)

    def leave(self, passage: Passage) -> None:
        """The request of ``passage`` has ended (once; later calls do nothing)."""
        if not passage.counted:
            return
        passage.counted = False
        left = self.in_flight.get(passage.key, 0) - 1
        if left > 0:
            self.in_flight[passage.key] = left
        else:
            self.in_flight.pop(passage.key, None)
