"""The scoring algorithm of the ranking specification, after one deliberation, pure.

1. each agent's deliberation score: the mean of its proposals' aggregated scores over the
   rounds; 2. the current ranks (the caller loads them); 3. the floor rank group;
4. promote the winner(s); 5. update every agent's stats: its submissions of this
deliberation (propose and evaluate calls, with latency and outcome), then rounds,
deliberations and avg_score, rank and wins; 6. the caller saves and publishes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from agentladder.domain.promotion import Participant, PromotionResult, promote
from agentladder.domain.scoring import deliberation_scores, scored_round_counts
from agentladder.domain.stats import AgentPerformanceStats, record_deliberation, record_submission

__all__ = ["RankingOutcome", "Submission", "rank_deliberation"]


class Submission(BaseModel):
    """One propose or evaluate call of one agent."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    agent_id: str
    latency_ms: float = Field(ge=0)
    ok: bool


class RankingOutcome(BaseModel):
    """The promotion and every participant's new stats."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scores: dict[str, float | None]
    promotion: PromotionResult
    stats: dict[str, AgentPerformanceStats]


def rank_deliberation(
    current: Mapping[str, AgentPerformanceStats],
    rounds: Sequence[Mapping[str, float | None]],
    submissions: Sequence[Submission],
    now: int,
) -> RankingOutcome:
    """Fold one completed deliberation into its participants' stats.

    ``current`` holds the stats of every participant (a new agent: default stats);
    ``rounds`` maps, per round, each participant to its proposal's aggregated score.
    """
    agents = list(current)
    by_agent = deliberation_scores(rounds)
    scores = {agent: by_agent.get(agent) for agent in agents}
    counts = scored_round_counts(rounds)
    promotion = promote([Participant(a, current[a].rank, scores[a]) for a in agents])
    new: dict[str, AgentPerformanceStats] = {}
    for agent in agents:
        stats = current[agent]
        for submission in submissions:
            if submission.agent_id == agent:
                stats = record_submission(stats, latency_ms=submission.latency_ms, ok=submission.ok)
        new[agent] = record_deliberation(
            stats,
            score=scores[agent],
            rounds=counts.get(agent, 0) if scores[agent] is not None else 0,
            promoted=agent in promotion.promoted,
            now=now,
        )
    return RankingOutcome(scores=scores, promotion=promotion, stats=new)
