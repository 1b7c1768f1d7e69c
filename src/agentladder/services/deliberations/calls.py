"""Running totals of the calls made to agents' providers, for ``/metrics``.

Every propose or evaluate attempt is one call: its latency (a histogram by agent and
call), and when it failed, the kind of failure (``ProviderError.kind``: timeout, http,
refused, unparseable, invalid, and rejected: a gateway request its provider refused as
invalid; ``timeout`` too when the call's deadline passed; ``other``
for any other exception, or a kind a remote agent made up, so that the labels stay a
known few). A call that answered adds its tokens and its cost, at the agent's prices, to
the agent's totals. The totals only grow; the metrics module serves them as counters.
"""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass, field

from agentladder.errors import ProviderError

__all__ = ["BUCKETS", "ERROR_KINDS", "Latencies", "ProviderCalls", "error_kind"]

BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
"""Upper bounds of the latency histogram, in seconds (model calls take up to minutes)."""
ERROR_KINDS = frozenset(
    {"timeout", "http", "refused", "unparseable", "invalid", "rejected", "limit"}
)


def error_kind(failure: BaseException) -> str:
    """The label of a failed call: its ProviderError kind when known, else ``other``."""
    if isinstance(failure, TimeoutError):
        return "timeout"
    if isinstance(failure, ProviderError) and failure.kind in ERROR_KINDS:
        return failure.kind
    return "other"


@dataclass
class Latencies:
    """One histogram: the count in each bucket (the last: above every bound), the sum."""

    counts: list[int] = field(default_factory=lambda: [0] * (len(BUCKETS) + 1))
    total_s: float = 0.0

    def observe(self, seconds: float) -> None:
        """Count one latency."""
        self.counts[bisect.bisect_left(BUCKETS, seconds)] += 1
        self.total_s += seconds

    def cumulative(self) -> list[tuple[str, int]]:
        """Prometheus buckets: ``(le, calls at most le)``, ending with ``+Inf``."""
        out, running = [], 0
        for bound, count in zip((*map(str, BUCKETS), "+Inf"), self.counts, strict=True):
            running += count
            out.append((bound, running))
        return out


@dataclass
class ProviderCalls:
    """The totals of one orchestrator's calls."""

    latency: dict[tuple[str, str], Latencies] = field(default_factory=dict)
    errors: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    tokens: Counter[tuple[str, str]] = field(default_factory=Counter)
    cost: dict[str, float] = field(default_factory=dict)

    def observe(self, agent: str, call: str, seconds: float, error: str | None) -> None:
        """One attempt of ``call`` (propose or evaluate), failed with ``error`` or not."""
        self.latency.setdefault((agent, call), Latencies()).observe(seconds)
        if error is not None:
            self.errors[agent, call, error] += 1

    def spend(self, agent: str, input_tokens: int, output_tokens: int, cost: float) -> None:
        """What a call that answered used and cost."""
        self.tokens[agent, "input"] += input_tokens
        self.tokens[agent, "output"] += output_tokens
        self.cost[agent] = self.cost.get(agent, 0.0) + cost
