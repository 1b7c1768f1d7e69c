"""Axes of the server-drawn SVG charts: a value's pixel on a linear or log scale, and the
ticks worth labelling. Pure functions; the dashboard's routing page uses them.

Costs per round across a fleet span orders of magnitude (a small local model at $0.001,
a frontier model at $0.2), so on a linear axis every cheap agent sits on top of the
others at the left edge. When the positive costs span ``LOG_SPAN`` or more, the cost axis
is logarithmic; an agent that costs nothing sits at the left edge. Skills are 0-10, but
a fleet's lie within a few points, so the skill axis is fitted to the intervals shown.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Axis", "cost_axis", "skill_axis"]

LOG_SPAN = 10.0  # the ratio of the dearest to the cheapest positive cost that makes it log
PAD = 1.25  # room beyond the extreme costs on a log axis (a factor)


@dataclass(frozen=True)
class Axis:
    """Values ``low``..``high`` onto pixels ``start``..``end`` (``end`` < ``start`` for a
    vertical axis, whose pixels grow downwards)."""

    low: float
    high: float
    start: float
    end: float
    log: bool = False

    def _unit(self, value: float) -> float:
        if self.log:
            if value <= 0.0:
                return 0.0
            lo, hi = math.log10(self.low), math.log10(self.high)
            return min(1.0, max(0.0, (math.log10(value) - lo) / (hi - lo)))
        return min(1.0, max(0.0, (value - self.low) / (self.high - self.low)))

    def at(self, value: float) -> float:
        """The pixel of ``value`` (clamped to the axis)."""
        return round(self.start + self._unit(value) * (self.end - self.start), 1)

    def ticks(self) -> list[tuple[float, float]]:
        """``(value, pixel)`` of the values worth labelling: powers of ten on a log axis,
        whole numbers (every other one past 6) on a linear one."""
        if self.log:
            first = math.ceil(math.log10(self.low))
            last = math.floor(math.log10(self.high))
            values = [10.0**k for k in range(first, last + 1)]
        else:
            step = 1 if self.high - self.low <= 6 else 2
            start = math.ceil(self.low / step) * step
            values = [float(v) for v in range(int(start), int(self.high) + 1, step)]
        return [(v, self.at(v)) for v in values]


def cost_axis(costs: Sequence[float], start: float, end: float) -> Axis:
    """Log when the positive costs span ``LOG_SPAN`` or more, else linear from 0."""
    positive = [c for c in costs if c > 0.0]
    top = max(positive, default=0.0)
    if positive and top / min(positive) >= LOG_SPAN:
        return Axis(min(positive) / PAD, top * PAD, start, end, log=True)
    return Axis(0.0, top or 1.0, start, end)


def skill_axis(lows: Sequence[float], highs: Sequence[float], start: float, end: float) -> Axis:
    """Whole numbers around every interval shown (at least 3 points wide), within 0-10."""
    if not lows:
        return Axis(0.0, 10.0, start, end)
    low = max(0.0, math.floor(min(lows) - 0.25))
    high = min(10.0, math.ceil(max(highs) + 0.25))
    while high - low < 3.0:
        low, high = max(0.0, low - 1.0), min(10.0, high + 1.0)
    return Axis(low, high, start, end)
