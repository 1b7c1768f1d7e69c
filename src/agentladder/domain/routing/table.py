"""The agents as routing sees them at one task type (``Candidate``), indexed in each
strategy's order (``RoutingTable``): what ``route`` (``select.py``) chooses from."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agentladder.domain.levels import Level
from agentladder.domain.rules import MaxComplexity

__all__ = ["Candidate", "RoutingTable", "routing_table"]


@dataclass(frozen=True, slots=True)
class Candidate:
    """One agent as routing sees it at one task type."""

    agent_id: str
    skill: float
    sd: float
    low: float
    observations: int
    cost: float  # math.inf: it declared no prices (an agent known by its evidence only)
    latencies_ms: tuple[float, ...] = ()  # its recent latency window; p90 for the picks
    online: bool = True
    registered: bool = True  # False: known by its evidence alone (it never heartbeated)
    reachable: bool = True
    down: str | None = None  # why its health is down now
    share: float = 1.0  # degraded: the share of calls it answers (skill, sd, low scaled)
    rank: int = 0
    level: Level = Level.ROOKIE
    max_complexity: MaxComplexity = MaxComplexity.ANY
    tags: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class RoutingTable:
    """The agents in each strategy's order (ties by agent id)."""

    by_low: Sequence[Candidate]
    by_cost: Sequence[Candidate]
    by_upper: Sequence[tuple[float, Candidate]]  # (skill + tail sd * sd), highest first
    tail_sd: float

    def __len__(self) -> int:
        return len(self.by_low)


def routing_table(candidates: Iterable[Candidate], tail_sd: float = 4.0) -> RoutingTable:
    """Index the candidates for ``route``."""
    every = sorted(candidates, key=lambda c: c.agent_id)
    return RoutingTable(
        by_low=tuple(sorted(every, key=lambda c: -c.low)),
        by_cost=tuple(sorted(every, key=lambda c: (c.cost, -c.low))),
        by_upper=tuple(sorted(((c.skill + tail_sd * c.sd, c) for c in every), key=lambda u: -u[0])),
        tail_sd=tail_sd,
    )
