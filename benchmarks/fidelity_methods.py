"""The estimators compared in ``bench_fidelity``, and the measures of agreement with truth.

Peers, fed the same stream: openskill's Plackett-Luce model (``rate`` with each
deliberation's aggregated scores, so it sees the order only), and a Bradley-Terry fit
(``choix.ilsr_pairwise``) of every pairwise outcome of the aggregated scores. A plain mean
of aggregated scores (``avg_score``), floor-based rank and XP come from the service's own
stores on the same stream.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import choix
from openskill.models import PlackettLuce

__all__ = ["BradleyTerry", "OpenSkill", "kendall_tau", "separated_wrong"]


def kendall_tau(estimate: Mapping[str, float], truth: Mapping[str, float]) -> float:
    """Kendall's τ-b between an estimate and the truth over their common agents (ties in
    the estimate, as floor-based rank has many, count against it)."""
    agents = sorted(set(estimate) & set(truth))
    concordant = discordant = ties_e = ties_t = 0
    for i, a in enumerate(agents):
        for b in agents[i + 1 :]:
            de = estimate[a] - estimate[b]
            dt = truth[a] - truth[b]
            if de == 0 and dt == 0:
                continue
            if de == 0:
                ties_e += 1
            elif dt == 0:
                ties_t += 1
            elif de * dt > 0:
                concordant += 1
            else:
                discordant += 1
    n_e = concordant + discordant + ties_t
    n_t = concordant + discordant + ties_e
    if n_e == 0 or n_t == 0:
        return 0.0
    return (concordant - discordant) / math.sqrt(n_e * n_t)


def separated_wrong(
    intervals: Mapping[str, tuple[float, float, float]], truth: Mapping[str, float]
) -> tuple[int, int]:
    """(pairs whose 95% intervals do not overlap, of those in the wrong order)."""
    agents = sorted(set(intervals) & set(truth))
    separated = wrong = 0
    for i, a in enumerate(agents):
        for b in agents[i + 1 :]:
            (ma, la, ha), (mb, lb, hb) = intervals[a], intervals[b]
            if la > hb or lb > ha:
                separated += 1
                if (ma - mb) * (truth[a] - truth[b]) < 0:
                    wrong += 1
    return separated, wrong


class OpenSkill:
    """openskill's Plackett-Luce ratings, overall and per task type."""

    def __init__(self) -> None:
        self.model = PlackettLuce()
        self.ratings: dict[str | None, dict[str, Any]] = {}

    def rate(self, task_type: str, scores: Mapping[str, float]) -> None:
        """One deliberation's aggregated scores (higher is better)."""
        for scope in (None, task_type):
            table = self.ratings.setdefault(scope, {})
            agents = sorted(scores)
            teams = [[table.get(a) or self.model.rating(name=a)] for a in agents]
            rated = self.model.rate(teams, scores=[scores[a] for a in agents])
            for agent, team in zip(agents, rated, strict=True):
                table[agent] = team[0]

    def mu(self, task_type: str | None) -> dict[str, float]:
        """Each rated agent's mean."""
        return {a: r.mu for a, r in self.ratings.get(task_type, {}).items()}


class BradleyTerry:
    """Pairwise outcomes of the aggregated scores, fitted by choix at each checkpoint."""

    def __init__(self) -> None:
        self.pairs: dict[str | None, list[tuple[str, str]]] = {}

    def add(self, task_type: str, scores: Mapping[str, float]) -> None:
        """Every pair of one deliberation: the higher aggregated score wins (ties dropped)."""
        agents = sorted(scores)
        for i, a in enumerate(agents):
            for b in agents[i + 1 :]:
                if scores[a] == scores[b]:
                    continue
                won = (a, b) if scores[a] > scores[b] else (b, a)
                for scope in (None, task_type):
                    self.pairs.setdefault(scope, []).append(won)

    def strengths(self, task_type: str | None, agents: Sequence[str]) -> dict[str, float]:
        """The fitted strengths (a small regularization keeps unbeaten agents finite)."""
        pairs = self.pairs.get(task_type, [])
        seen = sorted({x for pair in pairs for x in pair} & set(agents))
        if len(seen) < 2:
            return {}
        index = {a: i for i, a in enumerate(seen)}
        data = [(index[w], index[o]) for w, o in pairs if w in index and o in index]
        params = choix.ilsr_pairwise(len(seen), data, alpha=0.01)
        return {a: float(params[index[a]]) for a in seen}
