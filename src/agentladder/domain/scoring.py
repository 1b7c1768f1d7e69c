"""Peer-score aggregation: from evaluators' scores to an agent's deliberation score.

Rules (``DESIGN.md``):

- Every evaluator scores a proposal from 0 to 10. A proposal's ``aggregated_score`` is
  the mean of its PEERS' scores: the author's own score, if present, is ignored. With 4
  or more peer evaluators the single highest and the single lowest score are dropped
  first. No peer score: ``None``.
- An agent's deliberation score is the mean of its proposals' aggregated scores that are
  not ``None``; ``None`` when it has none (it then cannot win a promotion).
- Means are ``statistics.fmean`` (an exactly rounded sum), so the result does not depend
  on the order of the inputs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from statistics import fmean

from agentladder.errors import InvalidInput

__all__ = [
    "TRIM_FROM",
    "aggregate_peer_scores",
    "deliberation_score",
    "deliberation_scores",
    "scored_round_counts",
]

TRIM_FROM = 4
"""With this many peer evaluators or more, the highest and lowest score are dropped."""


def _check_score(field: str, score: float) -> float:
    if (
        isinstance(score, bool)
        or not isinstance(score, int | float)
        or not math.isfinite(score)
        or not 0 <= score <= 10
    ):
        raise InvalidInput(field, score, "must be a finite number from 0 to 10")
    return float(score)


def aggregate_peer_scores(author: str, evaluations: Mapping[str, float]) -> float | None:
    """The aggregated score of ``author``'s proposal from ``evaluations`` (evaluator → score)."""
    checked = {e: _check_score(f"evaluations[{e}]", s) for e, s in evaluations.items()}
    peers = sorted(score for evaluator, score in checked.items() if evaluator != author)
    if not peers:
        return None
    if len(peers) >= TRIM_FROM:
        peers = peers[1:-1]
    return fmean(peers)


def deliberation_score(aggregated_scores: Sequence[float | None]) -> float | None:
    """The mean of an agent's aggregated scores that are not ``None``; else ``None``."""
    scores = [
        _check_score(f"aggregated_scores[{index}]", score)
        for index, score in enumerate(aggregated_scores)
        if score is not None
    ]
    return fmean(scores) if scores else None


def _by_agent(rounds: Sequence[Mapping[str, float | None]]) -> dict[str, list[float]]:
    scores: dict[str, list[float]] = {}
    for number, round_scores in enumerate(rounds):
        for agent_id, score in round_scores.items():
            agent_scores = scores.setdefault(agent_id, [])
            if score is not None:
                agent_scores.append(_check_score(f"rounds[{number}][{agent_id}]", score))
    return {agent_id: scores[agent_id] for agent_id in sorted(scores)}


def deliberation_scores(rounds: Sequence[Mapping[str, float | None]]) -> dict[str, float | None]:
    """Per agent, its deliberation score over ``rounds`` (each: agent_id → aggregated score).

    Every agent named in any round is in the result; an agent missing from a round had
    no proposal in it.
    """
    return {
        agent_id: (fmean(scores) if scores else None)
        for agent_id, scores in _by_agent(rounds).items()
    }


def scored_round_counts(rounds: Sequence[Mapping[str, float | None]]) -> dict[str, int]:
    """Per agent, the number of rounds in which its proposal got an aggregated score."""
    return {agent_id: len(scores) for agent_id, scores in _by_agent(rounds).items()}
