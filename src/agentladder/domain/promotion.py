"""Floor-based promotion: who earns rank += 1 after a deliberation.

The eight rules of the seed ``agent-ranking.md``:

1. All agents start at rank 0 (the caller's concern: an agent without stats is rank 0).
2. After a deliberation, its participants are grouped by current rank.
3. Only the floor group (the lowest rank among ALL participants, scored or not) competes.
4. The highest scorer of the floor group is promoted: rank += 1.
5. Ties (scores equal after rounding to 9 decimals, i.e. 1e-9) all promote.
6. A single agent in the floor group auto-promotes.
7. Rank never decreases: ``apply_promotion`` only ever adds 1.
8. Agents above the floor are not affected.

Decisions (``DESIGN.md``): an agent whose score is ``None`` (no scored proposal) cannot
win and does not auto-promote; a floor group in which nobody scored promotes nobody,
even when agents of higher groups scored. No participants promote nobody.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agentladder.domain.agents import validate_agent_name
from agentladder.errors import InvalidInput

__all__ = [
    "MAX_SCORE",
    "TIE_DECIMALS",
    "Participant",
    "PromotionResult",
    "apply_promotion",
    "promote",
]

MAX_SCORE = 10.0
TIE_DECIMALS = 9


@dataclass(frozen=True, slots=True)
class Participant:
    """An agent of a deliberation: its current rank and its deliberation score.

    ``score`` is ``None`` when the agent had no scored proposal; else 0 to 10.
    """

    agent_id: str
    rank: int
    score: float | None = None

    def __post_init__(self) -> None:
        validate_agent_name(self.agent_id, "agent_id")
        if isinstance(self.rank, bool) or not isinstance(self.rank, int) or self.rank < 0:
            raise InvalidInput("rank", self.rank, f"must be an int >= 0 (agent {self.agent_id!r})")
        score = self.score
        if score is not None and (
            isinstance(score, bool)
            or not isinstance(score, int | float)
            or not math.isfinite(score)
            or not 0 <= score <= MAX_SCORE
        ):
            reason = f"must be a finite number from 0 to 10 or None (agent {self.agent_id!r})"
            raise InvalidInput("score", score, reason)


@dataclass(frozen=True, slots=True)
class PromotionResult:
    """Who promotes and why.

    ``reason`` is one of ``highest_score``, ``tie``, ``single_agent``, ``no_scores``
    (nobody in the floor group scored) and ``no_participants``.
    """

    floor_rank: int | None
    floor_group: tuple[str, ...]
    promoted: tuple[str, ...]
    reason: str


def promote(participants: Sequence[Participant]) -> PromotionResult:
    """Apply the floor rule; the result does not depend on the order of ``participants``."""
    seen: set[str] = set()
    for participant in participants:
        if participant.agent_id in seen:
            raise InvalidInput("participants", participant.agent_id, "lists the same agent twice")
        seen.add(participant.agent_id)
    if not participants:
        return PromotionResult(None, (), (), "no_participants")
    floor_rank = min(p.rank for p in participants)
    floor = sorted((p for p in participants if p.rank == floor_rank), key=lambda p: p.agent_id)
    floor_group = tuple(p.agent_id for p in floor)
    scored = {p.agent_id: round(p.score, TIE_DECIMALS) for p in floor if p.score is not None}
    if not scored:
        return PromotionResult(floor_rank, floor_group, (), "no_scores")
    if len(floor) == 1:
        return PromotionResult(floor_rank, floor_group, floor_group, "single_agent")
    best = max(scored.values())
    winners = tuple(agent_id for agent_id, score in scored.items() if score == best)
    reason = "tie" if len(winners) > 1 else "highest_score"
    return PromotionResult(floor_rank, floor_group, winners, reason)


def apply_promotion(ranks: Mapping[str, int], result: PromotionResult) -> dict[str, int]:
    """New ranks: every promoted agent goes from the floor rank to floor rank + 1.

    An agent missing from ``ranks`` is at rank 0. A promoted agent that is not at the
    result's floor rank is refused (the result was computed from other ranks, or is
    being applied a second time).
    """
    for agent_id, rank in ranks.items():
        if isinstance(rank, bool) or not isinstance(rank, int) or rank < 0:
            raise InvalidInput(f"ranks[{agent_id}]", rank, "must be an int >= 0")
    new_ranks = dict(ranks)
    for agent_id in result.promoted:
        current = ranks.get(agent_id, 0)
        if current != result.floor_rank:
            reason = f"must equal the floor rank {result.floor_rank} of the promotion"
            raise InvalidInput(f"ranks[{agent_id}]", current, reason)
        new_ranks[agent_id] = current + 1
    return new_ranks
