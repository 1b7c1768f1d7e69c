"""A token bucket: requests per second with a burst, the clock given to every call.

The bucket holds at most ``burst`` tokens and gains ``rate_per_s`` a second; a request
takes one, and is refused while the bucket holds less than one. ``take(now)`` answers
whether the request may go, and the figures a refusal (and every answer) reports in
OpenAI's headers: how many requests are left now, the seconds until the bucket holds a
token again (``Retry-After``, rounded up by ``retry_after``) and until it is full again
(``x-ratelimit-reset-requests``, spelled by ``reset_text``). ``now`` is any monotonic
clock in seconds: the caller owns time, so the arithmetic is tested exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Take", "TokenBucket", "reset_text", "retry_after"]


@dataclass(frozen=True)
class Take:
    """A request's answer from the bucket."""

    allowed: bool
    remaining: int
    """Whole requests the bucket allows right after this one."""
    wait_s: float
    """Seconds until the bucket holds a token again (0 when it still does)."""
    full_s: float
    """Seconds until the bucket is full again."""


class TokenBucket:
    """``rate_per_s`` requests a second on average, ``burst`` at once; starts full."""

    def __init__(self, rate_per_s: float, burst: int, now: float) -> None:
        if not rate_per_s > 0 or not math.isfinite(rate_per_s):
            raise ValueError(f"rate_per_s must be a positive number, not {rate_per_s!r}")
        if burst < 1:
            raise ValueError(f"burst must be at least 1, not {burst!r}")
        self.rate_per_s = rate_per_s
        self.burst = burst
        self.tokens = float(burst)
        self.stamp = now

    def _refill(self, now: float) -> None:
        if now > self.stamp:  # a clock that steps back refills nothing
            self.tokens = min(float(self.burst), self.tokens + (now - self.stamp) * self.rate_per_s)
            self.stamp = now

    def take(self, now: float) -> Take:
        """Take a token if there is one, at time ``now``."""
        self._refill(now)
        allowed = self.tokens >= 1.0
        if allowed:
            self.tokens -= 1.0
        wait_s = 0.0 if self.tokens >= 1.0 else (1.0 - self.tokens) / self.rate_per_s
        full_s = (self.burst - self.tokens) / self.rate_per_s
        return Take(allowed, math.floor(self.tokens), wait_s, full_s)


def retry_after(wait_s: float) -> int:
    """``Retry-After``'s whole seconds for a wait: rounded up, at least 1."""
    return max(1, math.ceil(wait_s - 1e-9))


def reset_text(seconds: float) -> str:
    """A duration as OpenAI spells its reset headers: ``"20ms"``, ``"1.5s"``, ``"6m0s"``
    (milliseconds rounded up, so the time told is never early)."""
    millis = max(0, math.ceil(seconds * 1000 - 1e-6))
    if millis < 1000:
        return f"{millis}ms"
    minutes, rest = divmod(millis, 60_000)
    text = f"{rest / 1000:.3f}".rstrip("0").rstrip(".") + "s"
    return f"{minutes}m{text}" if minutes else text
