"""Intervals in a small peer fleet: as wide as the errors, whose largest part there is
shared by every agent of a task type (its level, read through the few deliberations'
offsets), not as narrow as if each agent's error were its own."""

from __future__ import annotations

import math
import random
import statistics

from agentladder.domain.skill import DeliberationEvidence, Evaluation, SkillRules, skill_view
from agentladder.domain.skill.state import new_skill
from tests.domain.skill_helpers import fold

RULES = SkillRules()
TYPES = ("code", "math", "prose")
AGENTS = tuple(f"a{i}" for i in range(8))


def _fleet(seed: int, count: int) -> tuple[dict[str, dict[str, float]], list[DeliberationEvidence]]:
    """8 agents (quality per type: a base U(3, 8.5) plus N(0, 0.7)), ``count`` deliberations
    of 4 or 5 of them at a random type, each with its own offset N(0, 1), two rounds of
    every agent scoring every other with noise 0.5, clipped to 0-10."""
    rng = random.Random(seed)
    quality = {}
    for agent in AGENTS:
        base = rng.uniform(3.0, 8.5)
        quality[agent] = {t: min(9.5, max(1.0, base + rng.gauss(0.0, 0.7))) for t in TYPES}
    out = []
    for index in range(count):
        task_type = rng.choice(TYPES)
        chosen = sorted(rng.sample(AGENTS, rng.choice((4, 5))))
        offset = rng.gauss(0.0, 1.0)
        scores = tuple(
            Evaluation(evaluator=e, author=a, round=r, score=round(min(10.0, max(0.0,
                       quality[a][task_type] + offset + rng.gauss(0.0, 0.5))), 3))
            for r in (1, 2)
            for e in chosen
            for a in chosen
            if a != e
        )  # fmt: skip
        out.append(DeliberationEvidence(key=f"d{index}", at=1_000_000.0 + 60.0 * index,
                                        task_type=task_type, agents=tuple(chosen),
                                        evaluations=scores))  # fmt: skip
    return quality, out


def test_a_small_fleets_intervals_are_as_wide_as_its_errors() -> None:
    """30 fleets of 8 agents after 25 deliberations: at each task type the errors of the
    estimates, over their sd, have a root mean square within 0.8-1.25 (1 if the intervals
    are as wide as the errors), and 90-98% of the 95% intervals hold the truth."""
    z: list[float] = []
    for seed in range(30):
        quality, events = _fleet(seed, 25)
        states, fleet = fold(events)
        now = events[-1].at
        for task_type in sorted(fleet.levels):
            for agent in AGENTS:
                view = skill_view(states.get(agent) or new_skill(agent, RULES), fleet,
                                  task_type, now, RULES)  # fmt: skip
                z.append((view.skill - quality[agent][task_type]) / view.sd)
    rms = math.sqrt(statistics.fmean(v * v for v in z))
    covered = statistics.fmean(1.0 if abs(v) <= RULES.interval_z else 0.0 for v in z)
    assert 0.8 <= rms <= 1.25
    assert 0.90 <= covered <= 0.98
