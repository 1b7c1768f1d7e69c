"""The agents as routing sees them at one task type (``Candidate``), indexed in each
strategy's order (``RoutingTable``): what ``route`` (``select.py``) chooses from."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from agentladder.domain.levels import Level
from agentladder.domain.rules import MaxComplexity

__all__ = ["Candidate", "RoutingTable", "Tails", "routing_table", "tails_of"]


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
class Tails:
    """Every agent's skill and sd as arrays, in one fixed order (by upper tail ``skill +
    tail_sd * sd``, highest first, ties by agent id), and the candidate at an index:
    explore's Thompson draws are made over them at once (``select._draws``). A degraded
    agent (``share`` below 1) comes after the others, by agent id, however high its
    scaled upper tail: the projection keeps the others' order and adds the agents
    degraded at the moment of the call after them, and the full read gives the same."""

    skills: npt.NDArray[np.float64]
    sds: npt.NDArray[np.float64]
    at: Callable[[int], Candidate]

    def __len__(self) -> int:
        return len(self.skills)


def tails_of(candidates: Sequence[Candidate]) -> Tails:
    """``Tails`` over ``candidates``, already in the tails' order."""
    return Tails(
        skills=np.fromiter((c.skill for c in candidates), np.float64, len(candidates)),
        sds=np.fromiter((c.sd for c in candidates), np.float64, len(candidates)),
        at=candidates.__getitem__,
    )


@dataclass(frozen=True, slots=True)
class RoutingTable:
    """The agents in each strategy's order (ties by agent id)."""

    by_low: Sequence[Candidate]
    by_cost: Sequence[Candidate]
    tails: Tails  # the skills and sds explore draws from
    tail_sd: float

    def __len__(self) -> int:
        return len(self.by_low)


def routing_table(candidates: Iterable[Candidate], tail_sd: float = 4.0) -> RoutingTable:
    """Index the candidates for ``route``."""
    every = sorted(candidates, key=lambda c: c.agent_id)
    return RoutingTable(
        by_low=tuple(sorted(every, key=lambda c: -c.low)),
        by_cost=tuple(sorted(every, key=lambda c: (c.cost, -c.low))),
        tails=tails_of(
            sorted((c for c in every if c.share == 1.0), key=lambda c: -(c.skill + tail_sd * c.sd))
            + [c for c in every if c.share != 1.0]
        ),
        tail_sd=tail_sd,
    )
