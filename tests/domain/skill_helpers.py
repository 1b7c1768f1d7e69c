"""Synthetic deliberations with known qualities, folded through the evidence model."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence

from agentladder.domain.skill import (
    AgentSkill,
    DeliberationEvidence,
    Evaluation,
    FleetSkill,
    SkillRules,
    apply_evidence,
    fit_observations,
    observations_of,
    snapshot_of,
)
from agentladder.domain.skill.evidence import Evidence

Scorer = Callable[[str, str, float, random.Random], float]
"""(evaluator, author, true quality, rng) -> the score given."""


def honest(noise: float = 0.5, leniency: Mapping[str, float] | None = None) -> Scorer:
    """Quality plus the evaluator's leniency plus Gaussian noise, clipped to 0-10."""
    bias = dict(leniency or {})

    def score(evaluator: str, author: str, quality: float, rng: random.Random) -> float:
        value = quality + bias.get(evaluator, 0.0) + rng.gauss(0.0, noise)
        return min(10.0, max(0.0, value))

    return score


def colluding(pair: set[str], fallback: Scorer) -> Scorer:
    """The ``pair`` give each other 10 and everyone else 0; the others score by ``fallback``
    (which draws its noise for every score, so a run with colluders and one without see
    the same offsets and the same honest noise)."""

    def score(evaluator: str, author: str, quality: float, rng: random.Random) -> float:
        fair = fallback(evaluator, author, quality, rng)
        if evaluator in pair:
            return 10.0 if author in pair else 0.0
        return fair

    return score


def deliberations(
    quality: Mapping[str, float],
    count: int,
    scorer: Scorer,
    *,
    seed: int = 0,
    size: int | None = None,
    task_type: str = "code_review",
    rounds: int = 2,
) -> list[DeliberationEvidence]:
    """``count`` deliberations among random subsets (all agents when ``size`` is None)."""
    rng = random.Random(seed)
    agents = sorted(quality)
    out = []
    for index in range(count):
        chosen = agents if size is None else sorted(rng.sample(agents, size))
        offset = rng.gauss(0.0, 0.5)
        scores = [
            Evaluation(
                evaluator=e, author=a, round=r,
                score=round(scorer(e, a, quality[a] + offset, rng), 4),
            )
            for r in range(1, rounds + 1)
            for e in chosen
            for a in chosen
            if a != e
        ]  # fmt: skip
        out.append(
            DeliberationEvidence(
                key=f"d{index}",
                at=1_000_000.0 + 60.0 * index,
                task_type=task_type,
                agents=tuple(chosen),
                evaluations=tuple(scores),
            )
        )
    return out


def fold(
    events: Sequence[Evidence],
    rules: SkillRules | None = None,
    states: dict[str, AgentSkill] | None = None,
    fleet: FleetSkill | None = None,
) -> tuple[dict[str, AgentSkill], FleetSkill]:
    """The fit of the events (the authoritative estimate); from given ``states`` and
    ``fleet``, each event's filter step in order instead (what happens between fits)."""
    rules = rules or SkillRules()
    if states is None and fleet is None:
        snapshot = snapshot_of(fit_observations(observations_of(events), rules), rules,
                               len(events), len(events), 0.0)  # fmt: skip
        return dict(snapshot.agents), snapshot.fleet
    states = dict(states or {})
    fleet = fleet or FleetSkill()
    for event in events:
        states.update(apply_evidence(states, fleet, event, rules).agents)
    return states, fleet
