"""Simulated fleets with known quality, and the deliberations they produce (seeded).

An agent has a true quality per task type on the 0-10 score scale. Each deliberation
picks a task type and 4 or 5 agents (skewed use: half the agents are picked three times
as often), runs ``rounds`` rounds in which every agent scores every other agent's
proposal:

    score = clip(quality(author, type) + offset(deliberation) + leniency(evaluator)
                 + noise(evaluator), 0, 10)

Two colluders, where a scenario has them, give each other 10 and everyone else 0. A
lenient group (a share of the agents) scores ``group_shift`` higher than the rest;
evaluators may each have their own noise; Sybils (two fresh ids per deliberation, taken
in turn from 20) score the others honestly and one target 10.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

__all__ = ["SYBIL_TARGET", "Fleet", "Scenario", "SimDeliberation", "make_fleet", "stream"]

TASK_TYPES = ("code_review", "summarize", "translate")
SYBIL_TARGET = "agent_00"


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
    lenient_group: float = 0.0  # share of the agents scoring group_shift higher
    group_shift: float = 1.5
    own_noise: bool = False  # each evaluator's noise ~ U(0.3, 2.0) instead of ``noise``
    sybils: bool = False


@dataclass
class Fleet:
    """The hidden truth of one seeded world."""

    agents: list[str]
    quality: dict[str, dict[str, float]]  # agent -> task type -> quality
    leniency: dict[str, float]
    weights: list[float]
    colluders: frozenset[str] = field(default_factory=frozenset)
    noise: dict[str, float] = field(default_factory=dict)

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
    """Agents with hidden qualities, leniencies, noises and popularity."""
    agents = [f"agent_{i:02d}" for i in range(scenario.agents)]
    quality = {}
    for agent in agents:
        base = rng.uniform(3.0, 8.5)
        quality[agent] = {
            t: min(9.5, max(1.0, base + rng.gauss(0.0, scenario.type_spread))) for t in TASK_TYPES
        }
    leniency = {a: rng.uniform(-scenario.leniency, scenario.leniency) for a in agents}
    lenient = round(scenario.lenient_group * len(agents))
    for agent in agents[len(agents) - lenient :]:
        leniency[agent] += scenario.group_shift
    weights = [3.0 if i % 2 == 0 else 1.0 for i in range(len(agents))]
    colluders = (
        frozenset(rng.sample(agents, scenario.colluders)) if scenario.colluders else frozenset()
    )
    noise = {a: rng.uniform(0.3, 2.0) if scenario.own_noise else scenario.noise for a in agents}
    return Fleet(agents, quality, leniency, weights, colluders, noise)


def _pick(fleet: Fleet, size: int, rng: random.Random, must: frozenset[str]) -> list[str]:
    chosen: list[str] = list(must)
    while len(chosen) < size:
        agent = rng.choices(fleet.agents, weights=fleet.weights)[0]
        if agent not in chosen:
            chosen.append(agent)
    return sorted(chosen)


def _score(fleet: Fleet, evaluator: str, author: str, task_type: str, offset: float,
           rng: random.Random) -> float:  # fmt: skip
    if evaluator in fleet.colluders:
        return 10.0 if author in fleet.colluders else 0.0
    value = (
        fleet.quality[author][task_type] + offset + fleet.leniency.get(evaluator, 0.0)
        + rng.gauss(0.0, fleet.noise.get(evaluator, 0.5))
    )  # fmt: skip
    return round(min(10.0, max(0.0, value)), 3)


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
        if scenario.sybils:
            must = frozenset({SYBIL_TARGET})
        agents = _pick(fleet, max(size, len(must)), rng, must)
        sybils = [f"sybil_{(2 * index) % 20:02d}", f"sybil_{(2 * index + 1) % 20:02d}"]
        if scenario.sybils:
            for sybil in sybils:
                fleet.quality.setdefault(sybil, dict.fromkeys(TASK_TYPES, 3.0))
            agents = sorted([*agents, *sybils])
        offset = rng.gauss(0.0, scenario.difficulty)
        scores = []
        for round_ in range(1, scenario.rounds + 1):
            for evaluator in agents:
                for author in agents:
                    if author == evaluator:
                        continue
                    value = _score(fleet, evaluator, author, task_type, offset, rng)
                    if evaluator in sybils and author == SYBIL_TARGET:
                        value = 10.0
                    scores.append((evaluator, author, round_, value))
        out.append(SimDeliberation(index, task_type, tuple(agents), tuple(scores)))
    return out
