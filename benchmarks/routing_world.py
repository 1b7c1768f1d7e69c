"""A seeded world for the routing benchmark: 30 agents with hidden quality per task type,
prices and latencies; six join mid-stream (one better than every other at every type),
one degrades. Scores of a simulated deliberation are seeded per (task, evaluator, author),
so that the same agents on the same task score alike under every policy."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

__all__ = ["TASK_TYPES", "SimAgent", "World", "make_world"]

TASK_TYPES = ("code_review", "summarize", "translate")
TASKS = 2000
INITIAL = 24
JOINS = (300, 500, 700, 900, 1100, 1300)
STAR_JOINS = 700
DEGRADES_AT = 1000
DEGRADE_BY = 3.0
NOISE = 0.7
DIFFICULTY = 0.8


@dataclass
class SimAgent:
    """One agent's hidden truth and its declaration."""

    name: str
    quality: dict[str, float]
    input_price: float
    output_price: float
    latency_ms: float
    leniency: float
    joins_at: int = 0
    degrades_at: int | None = None

    @property
    def cost(self) -> float:
        """Its estimated cost per round (the declaration's formula)."""
        return (4000 * self.input_price + 1500 * self.output_price) / 1_000_000

    def true_quality(self, task_type: str, index: int) -> float:
        """Its quality at a task type at task ``index`` (after degrading, lower)."""
        value = self.quality[task_type]
        if self.degrades_at is not None and index >= self.degrades_at:
            return max(0.5, value - DEGRADE_BY)
        return value


@dataclass
class World:
    """The agents and the stream of task types."""

    seed: int
    agents: list[SimAgent]
    tasks: list[str]
    star: str
    degraded: str
    by_name: dict[str, SimAgent] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_name = {a.name: a for a in self.agents}

    def present(self, index: int) -> list[SimAgent]:
        """The agents that have joined by task ``index``."""
        return [a for a in self.agents if a.joins_at <= index]

    def scores(self, index: int, task_type: str, agents: list[str]) -> dict[str, dict[str, float]]:
        """author -> evaluator -> score, for one round among ``agents``."""
        offset = random.Random(f"{self.seed}:{index}:offset").gauss(0.0, DIFFICULTY)
        out: dict[str, dict[str, float]] = {}
        for author in agents:
            truth = self.by_name[author].true_quality(task_type, index)
            given = {}
            for evaluator in agents:
                if evaluator == author:
                    continue
                noise = random.Random(f"{self.seed}:{index}:{evaluator}:{author}").gauss(0, NOISE)
                value = truth + offset + self.by_name[evaluator].leniency + noise
                given[evaluator] = round(min(10.0, max(0.0, value)), 3)
            out[author] = given
        return out


def make_world(seed: int) -> World:
    """The seeded world."""
    rng = random.Random(seed)
    agents = []
    for i in range(INITIAL + len(JOINS)):
        base = rng.uniform(3.0, 8.5)
        quality = {t: min(9.5, max(1.0, base + rng.gauss(0.0, 0.7))) for t in TASK_TYPES}
        price = math.exp(rng.uniform(math.log(0.2), math.log(12.0))) * (0.5 + (base - 3.0) / 5.5)
        agents.append(
            SimAgent(
                name=f"agent_{i:02d}",
                quality=quality,
                input_price=round(price, 4),
                output_price=round(4 * price, 4),
                latency_ms=rng.uniform(200.0, 3000.0),
                leniency=rng.uniform(-0.5, 0.5),
                joins_at=0 if i < INITIAL else JOINS[i - INITIAL],
            )
        )
    star = agents[INITIAL + JOINS.index(STAR_JOINS)]
    for t in TASK_TYPES:
        star.quality[t] = min(9.8, max(a.quality[t] for a in agents if a is not star) + 0.6)
    best_initial = max(agents[:INITIAL], key=lambda a: sum(a.quality.values()))
    best_initial.degrades_at = DEGRADES_AT
    tasks = [rng.choice(TASK_TYPES) for _ in range(TASKS)]
    return World(seed, agents, tasks, star.name, best_initial.name)
