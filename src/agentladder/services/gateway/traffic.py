"""What the gateway counts of its own traffic, in memory since this instance started: its
added latency per request (a histogram by agent and task type) and the fallbacks.

The added latency is the gateway's own time on a request: from the route taking it
(authenticated) until the answer, or a stream's first bytes, is handed to the server,
less the time spent waiting for providers (every attempt's). A fallback is a request
answered by an agent after at least one other failed on it.
"""

from __future__ import annotations

import bisect
import time
from collections import Counter
from dataclasses import dataclass, field

__all__ = ["ADDED_BUCKETS", "AddedLatency", "Traffic"]

ADDED_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)
"""Upper bounds of the added-latency histogram, in seconds (the target: 2 ms at p50)."""


@dataclass
class AddedLatency:
    """One histogram: the count in each bucket (the last: above every bound), the sum."""

    counts: list[int] = field(default_factory=lambda: [0] * (len(ADDED_BUCKETS) + 1))
    total_s: float = 0.0

    def observe(self, seconds: float) -> None:
        """Count one request's added time (a negative one, clock noise, as 0)."""
        seconds = max(0.0, seconds)
        self.counts[bisect.bisect_left(ADDED_BUCKETS, seconds)] += 1
        self.total_s += seconds

    @property
    def count(self) -> int:
        """Requests counted."""
        return sum(self.counts)

    @property
    def mean_s(self) -> float | None:
        """The mean added time, None before any request."""
        return self.total_s / self.count if self.count else None

    def median_bound_s(self) -> float | None:
        """The bucket bound the median falls under (None above every bound or before
        any request)."""
        running, half = 0, self.count / 2
        for bound, count in zip(ADDED_BUCKETS, self.counts, strict=False):
            running += count
            if self.count and running >= half:
                return bound
        return None

    def cumulative(self) -> list[tuple[str, int]]:
        """Prometheus buckets: ``(le, requests at most le)``, ending with ``+Inf``."""
        out, running = [], 0
        for bound, count in zip((*map(str, ADDED_BUCKETS), "+Inf"), self.counts, strict=True):
            running += count
            out.append((bound, running))
        return out


@dataclass
class Traffic:
    """The added latency by (agent, task type), the fallbacks by (agent, task type) and
    the requests answered after the classifier gave them their task type, by (agent,
    task type, how: ``rule``, ``agent``, ``default``, ``failed``)."""

    added: dict[tuple[str, str], AddedLatency] = field(default_factory=dict)
    fallbacks: Counter[tuple[str, str]] = field(default_factory=Counter)
    classified: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    started_at: float = field(default_factory=time.time)
    """When this instance began counting (unix seconds)."""

    def answered(
        self, agent: str, task_type: str, added_s: float, failed_before: int,
        classified: str | None = None,
    ) -> None:  # fmt: skip
        """A request answered by ``agent`` after ``failed_before`` failed attempts; its
        task type found by the classifier as ``classified`` says (None: not classified)."""
        histogram = self.added.get((agent, task_type))
        if histogram is None:
            histogram = self.added[agent, task_type] = AddedLatency()
        histogram.observe(added_s)
        if failed_before:
            self.fallbacks[agent, task_type] += 1
        if classified is not None:
            self.classified[agent, task_type, classified] += 1
