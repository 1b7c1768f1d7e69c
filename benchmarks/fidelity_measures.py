"""What ``bench_fidelity`` measures of a fitted store against the known truth.

- the truth on the identifiable scale: a whole fleet's shared leniency cannot be seen in
  its own scores, so the board's scale is that of its sources' evidence-weighted average
  score at each task type (docs/skill.md); the truth is shifted by the same average of
  the sources' true leniencies, weighed by how many scores each gave over its noise; the
  true overall is the mean of the task types' truths, each on the 0-10 scale
  (``overall_truth``: what the overall shown is the mean of);
- coverage of the 95% intervals, overall and per task type;
- the share of pairs in different tiers (settled agents: a provisional one has no tier)
  that are in the wrong order, and how many agents the boards left provisional;
- Kendall's τ-b (``fidelity_methods``).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping

from agentladder.domain.skill.board import SkillEntry, skill_board, skill_view
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.state import AgentSkill, FleetSkill, new_skill

__all__ = ["Scored", "coverage", "measure", "overall_truth", "shifted", "wrong_tiers"]

Scored = tuple[str, str, float, float]
"""(source, task type, its true bias there, its noise sd) of one score given."""


def shifted(scores: Iterable[Scored], types: Iterable[str]) -> dict[str, float]:
    """Per task type, the evidence-weighted mean of the true biases of the scores given."""
    total: dict[str, float] = {}
    weight: dict[str, float] = {}
    for _, task_type, bias, noise in scores:
        w = 1.0 / (noise * noise)
        total[task_type] = total.get(task_type, 0.0) + w * bias
        weight[task_type] = weight.get(task_type, 0.0) + w
    return {t: total.get(t, 0.0) / weight[t] if weight.get(t) else 0.0 for t in types}


def overall_truth(
    truth: Mapping[str, Mapping[str, float]], agents: Iterable[str]
) -> dict[str, float]:
    """Each agent's true overall: the mean of its true skills at the task types, each on
    the scale as a skill is shown (a type whose truth reads past 10 on a lenient judge's
    scale counts 10: docs/skill.md, "Overall")."""
    return {
        a: statistics.fmean(min(10.0, max(0.0, real[a])) for real in truth.values()) for a in agents
    }


def coverage(views: Mapping[str, SkillEntry], truth: Mapping[str, float]) -> list[float]:
    """1 for each agent whose interval holds its true value, else 0."""
    return [1.0 if v.low <= truth[a] <= v.high else 0.0 for a, v in views.items() if a in truth]


def wrong_tiers(board: list[SkillEntry], truth: Mapping[str, float]) -> tuple[int, int]:
    """(pairs of settled agents in different tiers, of those in the wrong order): a
    provisional agent has no tier, so it is in no such pair."""
    apart = wrong = 0
    for i, a in enumerate(board):
        for b in board[i + 1 :]:
            if a.agent_id not in truth or b.agent_id not in truth:
                continue
            if a.tier is None or b.tier is None or a.tier == b.tier:
                continue
            apart += 1
            if truth[a.agent_id] < truth[b.agent_id]:
                wrong += 1
    return apart, wrong


def measure(
    states: Mapping[str, AgentSkill],
    fleet: FleetSkill,
    agents: list[str],
    truth: Mapping[str | None, Mapping[str, float]],
    now: float,
    rules: SkillRules,
) -> dict[str, float]:
    """Coverage overall and per task type (the mean over types), the wrong-tier share and
    counts, the boards' entries and how many of them are provisional, and each scope's
    estimate for τ (keys ``est:<scope>:<agent>``)."""
    out: dict[str, float] = {}
    per_type: list[float] = []
    apart = wrong = listed = provisional = 0
    for scope, real in truth.items():
        views = {
            a: skill_view(states.get(a) or new_skill(a, rules), fleet, scope, now, rules)
            for a in agents
        }
        covered = coverage(views, real)
        if scope is None:
            out["coverage"] = statistics.fmean(covered)
        else:
            per_type.append(statistics.fmean(covered))
        board = [
            e for e in skill_board(states.values(), fleet, scope, now, rules) if e.agent_id in real
        ]
        listed += len(board)
        provisional += sum(e.provisional for e in board)
        pairs = wrong_tiers(board, real)
        apart += pairs[0]
        wrong += pairs[1]
        for agent, view in views.items():
            out[f"est:{scope}:{agent}"] = view.skill
    out["coverage_type"] = statistics.fmean(per_type) if per_type else out.get("coverage", 0.0)
    out["wrong"] = wrong / apart if apart else 0.0
    out["apart"] = float(apart)
    out["listed"], out["provisional"] = float(listed), float(provisional)
    return out
