"""How the command line shows figures and empty results: costs in dollars with enough
digits, and the hint an empty store prints (what to run first)."""

from __future__ import annotations

import math

__all__ = ["EMPTY_STORE", "dollars"]

EMPTY_STORE = (
    "judge a task (`agentladder judge`), import a history (`agentladder import`), or run a"
    " deliberation (`agentladder deliberate` or `serve`); `make demo` writes a store to"
    " explore (agentladder-demo.db)"
)
"""What to run first, for a store with nothing to show yet."""


def dollars(cost: float | None) -> str:
    """``$0.0250``: four decimals; a positive cost under $0.0001 to two significant digits
    (``$0.000012``), never ``$0.0000``; ``-`` for none."""
    if cost is None:
        return "-"
    if 0 < cost < 0.0001:
        places = min(12, 1 - math.floor(math.log10(cost)))
        return f"${cost:.{places}f}"
    return f"${cost:.4f}"
