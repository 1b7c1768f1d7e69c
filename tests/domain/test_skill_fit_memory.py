"""The fit and its snapshot hold memory in proportion to the observations, at a bounded
cost each: what made a 1,000,000-judgment fit need more than a gigabyte was a Python tuple
per event for the histories and arrays held from one round into the next."""

from __future__ import annotations

import random
import tracemalloc

from agentladder.domain.skill import SkillRules, fit_observations, observations_of, snapshot_of
from agentladder.domain.skill.evidence import ScoreEvidence

FEW, MANY = 10_000, 40_000
PER_OBSERVATION = 380
"""Bytes of traced peak each observation may add to the fit and its snapshot (298
measured; 454 before)."""


def _judgments(count: int) -> list[ScoreEvidence]:
    rng = random.Random(15)
    out = []
    for i in range(count):
        agent = f"agent-{rng.randrange(300)}"
        task_type = rng.choice(("sql", "code", "docs"))
        score = round(rng.uniform(0, 10), 2)
        key = f"judgment:{agent}:eval-{i}"
        success = rng.random() < 0.8
        out.append(ScoreEvidence(key=key, at=1.7e9 + i, agent_id=agent, task_type=task_type,
                                 score=score, success=success))  # fmt: skip
    return out


def _peak(count: int) -> int:
    """The traced peak of fitting ``count`` judgments and making their states."""
    table = observations_of(_judgments(count))
    rules = SkillRules(exact_limit=100)  # the large fleet's solver, as at 1,000,000
    tracemalloc.start()
    try:
        snapshot = snapshot_of(fit_observations(table, rules), rules, 1, count, 1.8e9)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(snapshot.agents) == 300
    return peak


def test_the_fit_peak_grows_by_a_bounded_cost_per_observation() -> None:
    """30,000 more judgments add less than ``PER_OBSERVATION`` bytes each to the peak."""
    few, many = _peak(FEW), _peak(MANY)
    per = (many - few) / (MANY - FEW)
    print(f"fit and snapshot peak: {few >> 20} MB, {many >> 20} MB: {per:.0f} B an observation")
    assert per < PER_OBSERVATION
