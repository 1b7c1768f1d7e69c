"""Builders shared by the Oracle rule tests."""

from __future__ import annotations

from typing import Any

from agentladder.domain.award import Award, apply_judgment
from agentladder.domain.judgment import Judgment
from agentladder.domain.profile import AgentProfile, new_profile
from agentladder.domain.rules import OracleRules

RULES = OracleRules()
NOW = "2026-01-01T00:00:00+00:00"


def judgment(n: int = 0, **fields: Any) -> Judgment:
    """A judged task of agent ``a1``; ``n`` makes the contract id unique."""
    values: dict[str, Any] = {
        "agent_id": "a1",
        "contract_id": f"c-{n}",
        "task_type": "text_analysis",
        "score": 7.0,
    }
    values.update(fields)
    return Judgment(**values)


def run(judgments: list[Judgment], profile: AgentProfile | None = None) -> list[Award]:
    """Fold ``judgments`` in order from ``profile`` (a new one by default)."""
    current = profile or new_profile("a1")
    awards = []
    for item in judgments:
        award = apply_judgment(current, item, RULES, NOW)
        awards.append(award)
        current = award.profile
    return awards
