"""The runs of ``bench_sentinel`` at one level: one agent held at one level for a run of
tasks, through the pure policy the Oracle folds (``domain/probation.py``: ``rate_for``,
``on_judgment``, ``on_validation``; ``domain/privileges.sampling_decision``), without
the store.

The Oracle's judgments only add the task counters the policy reads (``total_tasks`` and
``tasks_judged``, and the successes among them, ``successful_tasks`` and
``tasks_completed``, whose share the evidence floor reads): this keeps those and nothing
else, so that many 1000-task runs fit in the benchmark's time. A failure counts once
known: seen by the judge, or caught by a validation. A run starts on probation with no
passes (``start="probation"``, the moment a failure was found: the run the per-run
clearance is derived for) or outside it (``start="level"``: a stream that never failed,
at its level's rate). An agent may degrade (``degrade_at``, ``degrade_to``), and a share
``visible`` of its failures may be seen by the judge (the judgment says it failed, which
starts probation); a failure the judge saw is not counted as unvalidated.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from agentladder.domain.judgment import Judgment, TaskPosition
from agentladder.domain.levels import Level
from agentladder.domain.privileges import sampling_decision
from agentladder.domain.probation import (
    SentinelSettings,
    on_failure,
    on_judgment,
    on_validation,
    rate_for,
)
from agentladder.domain.profile import (
    AgentProfile,
    LifetimeStats,
    ProbationCause,
    Specialization,
)
from agentladder.domain.rules import OracleRules

__all__ = ["LongRun", "RunResult", "long_run"]

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
    start: str = "level"  # "level" or "probation"
    degrade_at: int | None = None  # the task from which the agent fails at degrade_to
    degrade_to: float = 0.0
    visible: float = 0.0  # share of failures the judge sees
    miss: float = 0.0  # share of validated failures the validator passes


@dataclass(frozen=True)
class RunResult:
    """One run's figures."""

    unvalidated: float  # share of tasks failed, not validated, not seen by the judge
    audit: float  # share validated
    to_full: int | None  # tasks from the degradation until the effective rate is 1.0


def _advance(profile: AgentProfile, n: int, failed: int) -> AgentProfile:
    """The counters after the n-th judged task, ``failed`` of them known to have failed
    (what the policy reads of a judgment and a verdict)."""
    done = n - failed
    spec = profile.specializations[TYPE].model_copy(
        update={"tasks_judged": n, "tasks_completed": done}
    )
    return profile.model_copy(
        update={
            "stats": profile.stats.model_copy(update={"total_tasks": n, "successful_tasks": done}),
            "specializations": {TYPE: spec},
        }
    )


def long_run(job: LongRun) -> RunResult:
    """The run's unvalidated share, audit share and (for a degrader) tasks to full."""
    rng = random.Random(job.seed)
    profile = AgentProfile(
        id="a", level=job.level, stats=LifetimeStats(),
        specializations={TYPE: Specialization(level=job.level)},
    )  # fmt: skip
    if job.start == "probation":
        profile = on_failure(profile, TYPE, ProbationCause.FAILED_VALIDATION)
    unvalidated = validated = known = 0
    to_full = None
    for n in range(1, job.tasks + 1):
        degraded = job.degrade_at is not None and n > job.degrade_at
        if job.settings.evidence and n > 1:  # the floor reads the share of every task
            profile = _advance(profile, n - 1, known)
        rate = rate_for(profile, RULES, job.settings, TYPE)
        if degraded and to_full is None and rate.effective_rate == 1.0:
            to_full = n - 1 - (job.degrade_at or 0)
        decision = sampling_decision(job.level, rate.effective_rate, rng.random(), False)
        failed = rng.random() < (job.degrade_to if degraded else job.rate)
        seen = failed and rng.random() < job.visible
        caught = failed and rng.random() >= job.miss
        judgment = Judgment(agent_id="a", contract_id=f"c{n}", task_type=TYPE, success=not seen)
        known += seen or (caught and decision.validate_output)
        if seen:
            profile = on_judgment(_advance(profile, n, known), judgment)
        if decision.validate_output:
            validated += 1
            profile = _advance(profile, n, known - (caught and not seen))  # before its verdict
            position = TaskPosition(overall=n, in_task_type=n)
            profile = on_validation(profile, judgment, position, passed=not caught)
        elif failed and not seen:
            unvalidated += 1
    return RunResult(unvalidated / job.tasks, validated / job.tasks, to_full)
