"""A seeded simulated fleet for routing on judged traffic: 30 agents, 10 task types, prices
over three orders of magnitude, a true quality per (agent, task type) that rises with the
price with noise (and some cheap agents good at some types), and judged scores: the true
quality plus the judge's noise, rounded to a whole point and clipped to the 1-10 scale,
as GPT-4's MT-bench ratings are.

Each agent has a history (a few judged answers per task type, more for the dearer agents,
which have been in use longer); ``evaluation`` gives every agent's judged answers to a
fresh set of requests of every type (the held-out traffic of a static replay). A judged
score is seeded by (fleet, agent, request): the same request answered by the same agent
scores the same whoever routed it.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from functools import cached_property

from benchmarks.mt_bench_data import Judged
from benchmarks.routing_prices import Price

__all__ = ["AGENTS", "TYPES", "Fleet", "SimAgent", "make_fleet"]

AGENTS = 30
TYPES = tuple(f"type-{i}" for i in range(10))
PRICE_RANGE = (0.05, 50.0)
"""Input price per million tokens, log-uniform (output: 4 times it): per round 0.0005 to
0.5, three orders of magnitude."""
JUDGE_SD = 1.5
"""The judge's noise on one answer, in points of the 1-10 scale (MT-bench's GPT-4 ratings
of one model on one category spread about this much)."""
HISTORY_START = 1_700_000_000.0
"""When the history's judgments were made (seconds since the epoch)."""


@dataclass(frozen=True)
class SimAgent:
    """One agent: its name, prices and true quality per task type (1-10 scale)."""

    name: str
    price: Price
    quality: dict[str, float]
    history: dict[str, int]  # judged answers in its history, per task type


@dataclass(frozen=True)
class Fleet:
    """The agents, and their judged scores."""

    seed: int
    agents: list[SimAgent]

    def score(self, agent: str, task_type: str, request: str) -> float:
        """The judge's 1-10 rating of ``agent``'s answer to ``request`` (seeded)."""
        truth = self.by_name[agent].quality[task_type]
        noise = random.Random(f"{self.seed}:{agent}:{request}").gauss(0.0, JUDGE_SD)
        return float(min(10, max(1, round(truth + noise))))

    @cached_property
    def by_name(self) -> dict[str, SimAgent]:
        return {a.name: a for a in self.agents}

    def history(self) -> list[Judged]:
        """Every agent's past judged answers (question ids 1, 2, ...; turn 1)."""
        rows: list[Judged] = []
        for agent in self.agents:
            for task_type in TYPES:
                for k in range(agent.history[task_type]):
                    question = len(rows) + 1
                    rows.append(Judged(
                        question, task_type, 1, agent.name,
                        self.score(agent.name, task_type, f"history-{task_type}-{k}"),
                        HISTORY_START + question,
                    ))  # fmt: skip
        return rows

    def evaluation(self, per_type: int) -> list[Judged]:
        """Every agent's judged answers to ``per_type`` fresh requests of every type
        (question ids from 1,000,001; turn 1)."""
        rows: list[Judged] = []
        question = 1_000_000
        for task_type in TYPES:
            for k in range(per_type):
                question += 1
                for agent in self.agents:
                    score = self.score(agent.name, task_type, f"eval-{task_type}-{k}")
                    rows.append(Judged(question, task_type, 1, agent.name, score, 0.0))
        return rows


def make_fleet(seed: int) -> Fleet:
    """The seeded fleet: the price sets an agent's level (from about 4 for the cheapest to
    8.5 for the dearest on the 1-10 scale, plus noise of sd 0.6), each task type moves it
    by noise of sd 0.5, and each task type of the cheaper 60% is, with probability 0.3, a
    specialty 2 to 4 points better; qualities clipped to 1.5-9.5. In about a third of the
    task types an agent cheaper than the truly best is within 95% of it (0-10 scale).
    History: 1 to 3 judged answers per task type, 2 more for the dearer half."""
    rng = random.Random(seed)
    low, high = math.log(PRICE_RANGE[0]), math.log(PRICE_RANGE[1])
    agents = []
    for i in range(AGENTS):
        position = rng.random()
        price = round(math.exp(low + position * (high - low)), 4)
        level = 4.0 + 4.5 * position + rng.gauss(0.0, 0.6)
        quality = {}
        for task_type in TYPES:
            value = level + rng.gauss(0.0, 0.5)
            if position < 0.6 and rng.random() < 0.3:
                value += rng.uniform(2.0, 4.0)
            quality[task_type] = min(9.5, max(1.5, value))
        extra = 2 if position >= 0.5 else 0
        history = {t: rng.randint(1, 3) + extra for t in TYPES}
        agents.append(SimAgent(
            f"sim-{i:02d}", Price(price, 4 * price, "simulated", "simulated"), quality, history
        ))  # fmt: skip
    return Fleet(seed, agents)
