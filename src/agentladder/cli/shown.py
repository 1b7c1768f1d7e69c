"""How the command line shows figures and empty results: costs in dollars with enough
digits, averages of nothing as a dash, and the hint an empty store prints (what to run
first)."""

from __future__ import annotations

import math

__all__ = ["EMPTY_STORE", "average", "dollars"]

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


def average(value: float, scored: int, places: int = 2) -> str:
    """``value`` to ``places`` decimals; ``-`` when no score went into it (an agent judged
    only without scores has no average score, not 0.00), as the dashboard shows it."""
    return "-" if scored == 0 else f"{value:.{places}f}"
