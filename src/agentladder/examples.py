"""The worked examples of the two specifications, computed by the rules.

``agentladder demo`` prints them; the tests pin the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentladder.domain.agents import AgentConfig
from agentladder.domain.award import Award, apply_judgment
from agentladder.domain.judgment import Judgment
from agentladder.domain.levels import Level
from agentladder.domain.privileges import privileges_for
from agentladder.domain.profile import AgentProfile, new_profile
from agentladder.domain.promotion import Participant, PromotionResult, apply_promotion, promote
from agentladder.domain.rules import OracleRules

__all__ = [
    "DeliberationExample",
    "cost_example",
    "ranking_examples",
    "validation_rates",
    "xp_example",
]

# (agent, score) per deliberation of the ranking specification's example.
_DELIBERATIONS: tuple[tuple[tuple[str, float], ...], ...] = (
    (("A", 7.5), ("B", 8.2), ("C", 6.1)),
    (("A", 8.0), ("B", 7.5), ("C", 7.8), ("D", 6.0)),
    (("A", 9.0), ("B", 8.5)),
)


@dataclass(frozen=True)
class DeliberationExample:
    """One example deliberation: ranks before, scores, who promoted, ranks after."""

    number: int
    ranks_before: dict[str, int]
    scores: dict[str, float]
    result: PromotionResult
    ranks_after: dict[str, int]


def ranking_examples() -> list[DeliberationExample]:
    """The three deliberations of the ranking specification, ranks carried forward."""
    ranks: dict[str, int] = {}
    out = []
    for number, scores in enumerate(_DELIBERATIONS, start=1):
        before = {agent: ranks.get(agent, 0) for agent, _ in scores}
        result = promote([Participant(agent, before[agent], score) for agent, score in scores])
        ranks = apply_promotion(ranks, result)
        after = {agent: ranks.get(agent, 0) for agent, _ in scores}
        out.append(DeliberationExample(number, before, dict(scores), result, after))
    return out


def cost_example() -> AgentConfig:
    """The audit_expert agent of the specification (gpt-4o at 2.5 / 10.0 per Mtok)."""
    return AgentConfig(
        name="audit_expert",
        provider_id="openai",
        model_name="gpt-4o",
        description="Financial audit specialist — compliance, risk, regulatory analysis",
        capability_tags=("audit", "compliance", "legal", "financial"),
        signing_schemes=("eip712",),
        input_price_per_mtok=2.5,
        output_price_per_mtok=10.0,
    )


def xp_example(rules: OracleRules | None = None) -> Award:
    """The specification's judgment: one retry, score 8.5, cost 0.05 under a 0.10 budget."""
    judgment = Judgment(
        agent_id="gemini-2.0-flash",
        contract_id="img-gen-001",
        task_type="image_generation",
        score=8.5,
        retries=1,
        duration_ms=5000,
        cost=0.05,
        budget=0.10,
    )
    profile = new_profile("gemini-2.0-flash", "google", "gemini-2.0-flash")
    return apply_judgment(profile, judgment, rules or OracleRules(), "1970-01-01T00:00:00+00:00")


def validation_rates(rules: OracleRules | None = None) -> dict[Level, float]:
    """The Sentinels' validation rate at each level."""
    rules = rules or OracleRules()
    return {
        level: privileges_for(AgentProfile(id="x", level=level), rules).validation_rate
        for level in Level
    }
