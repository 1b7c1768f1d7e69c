"""The cost/quality frontier: the agents no cheaper agent beats on the lower bound.

Listed by cost (ties: the higher lower bound, then agent id), an agent is on the frontier
when its 95% lower bound is above that of every agent that costs no more: for its price,
nobody is shown to be better. The same conservative estimate ``best`` and
``cheapest_above`` choose by.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["frontier"]


def frontier(points: Iterable[tuple[str, float, float]]) -> list[str]:
    """The ids on the frontier of ``(agent_id, low, cost)`` points, cheapest first."""
    ordered = sorted(points, key=lambda p: (p[2], -p[1], p[0]))
    best = float("-inf")
    out = []
    for agent_id, low, _ in ordered:
        if low > best:
            out.append(agent_id)
            best = low
    return out
