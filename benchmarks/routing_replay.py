"""A static replay of judged traffic: routing chooses, per task type, one agent from the
history's estimates; that agent then answers every held-out request of the type, whose
judged scores are its quality and whose prices its cost.

- ``routed``: ``POST /route`` through the real ``RoutingService.route`` of the services the
  history was imported into (``mt_bench_data.imported_services``), every agent registered
  with its prices: ``count: 1``, ``strategy: cheapest_above``, ``quality_floor_share: f``,
  ``confidence: k``, ``explore_share: 0`` (a replay gives no feedback), one fixed seed.
- ``tables``: every agent as routing sees it at each task type, what the variant rules of
  ``routing_variants`` choose from.
- ``plain_router``: per task type, the cheapest agent whose plain mean is at least ``f``
  times the best plain mean at that type (ties on cost: the higher mean, then the name).
  On the history's means it is the plain-means router; on the held-out means, the
  hindsight oracle.
- ``Traffic``: the held-out answers as arrays, per agent and question (a question's turns
  summed), with ``ratios`` (a choice's quality and cost over the best single agent's) and
  ``intervals`` (the same over bootstrap resamples of the questions).
- ``shortfall``: how far one frontier falls below another at the other's costs.

Quality is on the service's 0-10 scale (the import's map of 1-10: 1 is 0, 10 is 10).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from agentladder.domain.routing.spec import RouteSpec, Strategy
from agentladder.domain.routing.table import Candidate
from agentladder.domain.scales import to_ten
from agentladder.services.container import Services
from benchmarks.mt_bench_data import Judged, plain_means
from benchmarks.routing_prices import Price

__all__ = [
    "Choice",
    "Routed",
    "Traffic",
    "best_single",
    "plain_router",
    "register",
    "routed",
    "shortfall",
    "tables",
    "traffic",
]

Choice = dict[str, str]
"""Task type -> the agent that answers its requests."""


async def register(services: Services, prices: Mapping[str, Price]) -> None:
    """Each agent heartbeats once with its declared prices (routing's cost)."""
    for agent, price in prices.items():
        await services.registry.heartbeat(
            {"name": agent, "input_price_per_mtok": price.input,
             "output_price_per_mtok": price.output}
        )  # fmt: skip


@dataclass(frozen=True)
class Routed:
    """One routing's pick, and whether it was proven to clear the floor."""

    agent: str
    proven: bool
    reference: str


async def tables(services: Services, types: Iterable[str]) -> dict[str, list[Candidate]]:
    """Task type -> every agent as routing sees it there (by cost): what a variant rule
    (``routing_variants``) chooses from."""
    return {
        t: list((await services.routing.projected(t, online_only=False)).by_cost) for t in types
    }


async def routed(
    services: Services,
    types: Iterable[str],
    floors: Sequence[float],
    confidences: Sequence[float],
    *,
    seed: int,
    explore_share: float = 0.0,
) -> dict[tuple[float, float], dict[str, Routed]]:
    """(confidence, floor) -> task type -> what ``POST /route`` answers for one task of
    that type: ``count`` 1, ``cheapest_above`` at ``quality_floor_share`` floor."""
    out: dict[tuple[float, float], dict[str, Routed]] = {}
    for task_type in types:
        for confidence in confidences:
            for floor in floors:
                spec = RouteSpec(
                    count=1, task_type=task_type, strategy=Strategy.CHEAPEST_ABOVE,
                    quality_floor_share=floor, confidence=confidence,
                    explore_share=explore_share, seed=seed,
                )  # fmt: skip
                answer = await services.routing.route(spec, online_only=False)
                if not answer.agents or answer.reference is None:
                    raise RuntimeError(f"routing chose nobody for {task_type} at {floor}")
                pick = answer.agents[0]
                proven = (pick.p_floor or 0.0) >= confidence
                out.setdefault((confidence, floor), {})[task_type] = Routed(
                    pick.agent_id, proven, answer.reference.agent_id
                )
    return out


def best_single(rows: Sequence[Judged]) -> str:
    """The agent with the highest plain mean over all its judgments (ties: by name)."""
    means = plain_means(rows)
    overall = {agent: v for (agent, scope), v in means.items() if scope is None}
    return min(overall, key=lambda a: (-overall[a], a))


def plain_router(rows: Sequence[Judged], prices: Mapping[str, Price], share: float) -> Choice:
    """Per task type, the cheapest agent whose plain mean there is at least ``share`` of
    the best plain mean there (ties on cost: the higher mean, then the name)."""
    means = plain_means(rows)
    types = sorted({scope for (_, scope) in means if scope is not None})
    choice: Choice = {}
    for task_type in types:
        at = {agent: v for (agent, scope), v in means.items() if scope == task_type}
        top = max(at.values())
        fit = [a for a, v in at.items() if v >= share * top - 1e-12]
        choice[task_type] = min(fit, key=lambda a: (prices[a].per_round, -at[a], a))
    return choice


@dataclass(frozen=True)
class Traffic:
    """Held-out answers: ``quality[a, q]`` the sum of agent a's scores (0-10) on question
    q's turns, ``cost[a, q]`` what they cost, ``types[q]`` the question's task type."""

    agents: list[str]
    questions: list[int]
    types: list[str]
    quality: np.ndarray
    cost: np.ndarray

    def rows(self, choice: Mapping[str, str]) -> np.ndarray:
        """The agent (its row) that answers each question under ``choice``."""
        index = {a: i for i, a in enumerate(self.agents)}
        return np.array([index[choice[t]] for t in self.types])

    def ratios(self, choice: Mapping[str, str], best: str) -> tuple[float, float]:
        """The choice's quality and cost over the best single agent's, on every question."""
        rows, cols = self.rows(choice), np.arange(len(self.questions))
        b = self.agents.index(best)
        quality = float(self.quality[rows, cols].sum() / self.quality[b].sum())
        return quality, float(self.cost[rows, cols].sum() / self.cost[b].sum())

    def intervals(
        self, choice: Mapping[str, str], best: str, draws: np.ndarray
    ) -> tuple[tuple[float, float], tuple[float, float]]:
        """The 95% percentile intervals of ``ratios`` over bootstrap resamples of the
        questions (``draws``: one row of question indices per resample)."""
        rows, cols = self.rows(choice), np.arange(len(self.questions))
        b = self.agents.index(best)
        ours_q, ours_c = self.quality[rows, cols][draws], self.cost[rows, cols][draws]
        best_q, best_c = self.quality[b][draws], self.cost[b][draws]
        q = ours_q.sum(axis=1) / best_q.sum(axis=1)
        c = ours_c.sum(axis=1) / best_c.sum(axis=1)
        q_range, c_range = np.percentile(q, [2.5, 97.5]), np.percentile(c, [2.5, 97.5])
        return (float(q_range[0]), float(q_range[1])), (float(c_range[0]), float(c_range[1]))


def traffic(rows: Sequence[Judged], cost: Callable[[Judged], float]) -> Traffic:
    """The held-out judgments as ``Traffic`` (every agent must have answered every turn
    of every question: the replay gives each request to whichever agent is chosen)."""
    agents = sorted({r.model for r in rows})
    questions = sorted({r.question_id for r in rows})
    types = {r.question_id: r.category for r in rows}
    turns = {(r.question_id, r.turn) for r in rows}
    a_index = {a: i for i, a in enumerate(agents)}
    q_index = {q: i for i, q in enumerate(questions)}
    quality = np.zeros((len(agents), len(questions)))
    spent = np.zeros((len(agents), len(questions)))
    seen = np.zeros((len(agents), len(questions)), dtype=int)
    for r in rows:
        i, j = a_index[r.model], q_index[r.question_id]
        quality[i, j] += to_ten(r.score, "1-10")
        spent[i, j] += cost(r)
        seen[i, j] += 1
    expected = np.array([sum(1 for q2, _ in turns if q2 == q) for q in questions])
    if (seen != expected).any():
        raise RuntimeError("held-out traffic: an agent did not answer every turn")
    return Traffic(agents, questions, [types[q] for q in questions], quality, spent)


def shortfall(ours: Sequence[tuple[float, float]], theirs: Sequence[tuple[float, float]]) -> float:
    """The most by which one of ``theirs`` (cost, quality) points has a higher quality than
    every one of ``ours`` that costs no more: at most 0 when our frontier is at least
    theirs everywhere they have a point (inf where we have no point that cheap)."""
    worst = -math.inf
    for cost, quality in theirs:
        reach = max((q for c, q in ours if c <= cost + 1e-12), default=-math.inf)
        worst = max(worst, quality - reach)
    return worst
