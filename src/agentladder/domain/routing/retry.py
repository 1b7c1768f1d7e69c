"""When a caller may ask again after every agent tried failed: the ``Retry-After`` of the
gateway's 503 ``agents_failed`` (docs/gateway.md, "Fallbacks and the 503").

Each agent tried may be asked again once both its health's cooldown (a down period with
an end) and its provider's last Retry-After have passed; an agent with neither may be
asked at once. The caller may try again when the soonest of them may be, rounded up to a
whole second, and never sooner than ``MIN_RETRY_S``: a retry at once would find the
same agents in the same state.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

__all__ = ["MIN_RETRY_S", "agent_wait_s", "retry_after_s"]

MIN_RETRY_S = 1
"""The least Retry-After the 503 says, in seconds."""


def agent_wait_s(now: float, down_until: float | None, retry_not_before: float | None) -> float:
    """Seconds from ``now`` until one agent may be asked again: the later of its cooldown's
    end and its provider's Retry-After (0 when both passed, or it has neither)."""
    ends = [end for end in (down_until, retry_not_before) if end is not None]
    return max([0.0, *(end - now for end in ends)])


def retry_after_s(waits: Iterable[float]) -> int:
    """The Retry-After of a 503 after agents with these waits failed: the soonest, in
    whole seconds rounded up, at least ``MIN_RETRY_S`` (also when none is known)."""
    known = [wait for wait in waits if math.isfinite(wait)]
    if not known:
        return MIN_RETRY_S
    return max(MIN_RETRY_S, math.ceil(min(known)))
