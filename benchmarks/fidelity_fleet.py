"""Simulated fleets with known quality, and the deliberations they produce (seeded).

An agent has a true quality per task type on the 0-10 score scale. Each deliberation
picks a task type and 4 or 5 agents (skewed use: half the agents are picked three times
as often), runs ``rounds`` rounds in which every agent scores every other agent's
proposal:

    score = clip(quality(author, type) + offset(deliberation) + leniency(evaluator)
                 + noise, 0, 10)

Two colluders, where a scenario has them, give each other 10 and everyone else 0.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

__all__ = ["Fleet", "Scenario", "SimDeliberation", "make_fleet", "stream"]

TASK_TYPES = ("code_review", "summarize", "translate")


@dataclass(frozen=True)
class Scenario:
    """One simulated world."""

    name: str
    agents: int = 8
    noise: float = 0.5
    leniency: float = 0.0  # evaluators' bias ~ U(-leniency, +leniency)
    difficulty: float = 1.0  # sd of the per-deliberation offset
    colluders: int = 0
    rounds: int = 2
    type_spread: float = 0.7  # sd of per-type quality around the agent's base


@dataclass
class Fleet:
    """The hidden truth of one seeded world."""

    agents: list[str]
    quality: dict[str, dict[str, float]]  # agent -> task type -> quality
    leniency: dict[str, float]
    weights: list[float]
    colluders: frozenset[str] = field(default_factory=frozenset)

    def overall(self, agent: str) -> float:
        """The agent's true overall quality: the mean over task types."""
        values = self.quality[agent]
        return sum(values.values()) / len(values)


@dataclass(frozen=True)
class SimDeliberation:
    """One deliberation: who took part and every score given."""

    index: int
    task_type: str
    agents: tuple[str, ...]
    scores: tuple[tuple[str, str, int, float], ...]  # evaluator, author, round, score


def make_fleet(scenario: Scenario, rng: random.Random) -> Fleet:
    """Agents with hidden qualities, leniencies and popularity."""
    agents = [f"agent_{i:02d}" for i in range(scenario.agents)]
    quality = {}
    for agent in agents:
        base = rng.uniform(3.0, 8.5)
        quality[agent] = {
            t: min(9.5, max(1.0, base + rng.gauss(0.0, scenario.type_spread))) for t in TASK_TYPES
        }
    leniency = {a: rng.uniform(-scenario.leniency, scenario.leniency) for a in agents}
    weights = [3.0 if i % 2 == 0 else 1.0 for i in range(len(agents))]
    colluders = (
        frozenset(rng.sample(agents, scenario.colluders)) if scenario.colluders else frozenset()
    )
    return Fleet(agents, quality, leniency, weights, colluders)


def _pick(fleet: Fleet, size: int, rng: random.Random, must: frozenset[str]) -> list[str]:
    chosen: list[str] = list(must)
    while len(chosen) < size:
        agent = rng.choices(fleet.agents, weights=fleet.weights)[0]
        if agent not in chosen:
            chosen.append(agent)
    return sorted(chosen)


def stream(
    scenario: Scenario, fleet: Fleet, count: int, rng: random.Random
) -> list[SimDeliberation]:
    """``count`` deliberations of the fleet."""
    out = []
    for index in range(count):
        task_type = rng.choice(TASK_TYPES)
        size = rng.choice((4, 5))
        # colluders take part together in a third of the deliberations
        must = fleet.colluders if fleet.colluders and rng.random() < 1 / 3 else frozenset()
        agents = _pick(fleet, max(size, len(must)), rng, must)
        offset = rng.gauss(0.0, scenario.difficulty)
        scores = []
        for round_ in range(1, scenario.rounds + 1):
            for evaluator in agents:
                for author in agents:
                    if author == evaluator:
                        continue
                    if evaluator in fleet.colluders:
                        value = 10.0 if author in fleet.colluders else 0.0
                    else:
                        value = (
                            fleet.quality[author][task_type] + offset
                            + fleet.leniency[evaluator] + rng.gauss(0.0, scenario.noise)
                        )  # fmt: skip
                        value = min(10.0, max(0.0, value))
                    scores.append((evaluator, author, round_, round(value, 3)))
        out.append(SimDeliberation(index, task_type, tuple(agents), tuple(scores)))
    return out
