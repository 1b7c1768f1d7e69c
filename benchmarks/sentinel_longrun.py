"""The long run of ``bench_sentinel``: one agent held at one level for many tasks, through
the pure policy the Oracle folds (``domain/probation.py``: ``rate_for``, ``on_validation``;
``domain/privileges.sampling_decision``), without the store.

The Oracle's judgments only add the task counters the policy reads (``total_tasks``,
``tasks_judged``): this keeps those two and nothing else, so that 10,000-task horizons fit
in the benchmark's time. It shows what a horizon much longer than ``1 / (f p)`` gives,
which the fleet runs (800 tasks, levels climbing as XP comes) are too short for.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from agentladder.domain.judgment import Judgment, TaskPosition
from agentladder.domain.levels import Level
from agentladder.domain.privileges import sampling_decision
from agentladder.domain.probation import SentinelSettings, on_validation, rate_for
from agentladder.domain.profile import AgentProfile, LifetimeStats, Specialization
from agentladder.domain.rules import OracleRules

__all__ = ["LongRun", "long_run"]

TYPE = "work"
RULES = OracleRules()


@dataclass(frozen=True)
class LongRun:
    """One agent, one level, one failure rate, one seed."""

    level: Level
    rate: float
    settings: SentinelSettings
    tasks: int
    seed: int


def _advance(profile: AgentProfile, n: int) -> AgentProfile:
    """The counters after the n-th judged task (what the policy reads of a judgment)."""
    spec = profile.specializations[TYPE].model_copy(update={"tasks_judged": n})
    return profile.model_copy(
        update={
            "stats": profile.stats.model_copy(update={"total_tasks": n}),
            "specializations": {TYPE: spec},
        }
    )


def long_run(job: LongRun) -> tuple[float, float]:
    """(share of tasks failed and not validated, share validated) over the run."""
    rng = random.Random(job.seed)
    profile = AgentProfile(
        id="a", level=job.level, stats=LifetimeStats(),
        specializations={TYPE: Specialization(level=job.level)},
    )  # fmt: skip
    unvalidated = validated = 0
    for n in range(1, job.tasks + 1):
        rate = rate_for(profile, RULES, job.settings, TYPE)
        decision = sampling_decision(job.level, rate.effective_rate, rng.random(), False)
        failed = rng.random() < job.rate
        if decision.validate_output:
            validated += 1
            profile = _advance(profile, n)  # the counters matter only to a verdict
            judgment = Judgment(agent_id="a", contract_id=f"c{n}", task_type=TYPE)
            position = TaskPosition(overall=n, in_task_type=n)
            profile = on_validation(profile, judgment, position, passed=not failed)
        else:
            unvalidated += failed
    return unvalidated / job.tasks, validated / job.tasks
