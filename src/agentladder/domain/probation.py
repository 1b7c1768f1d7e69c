"""Probation: trust that can be lost, as Dodge's continuous sampling plan CSP-1.

An agent is sampled at its level's rate ``f`` while nothing is wrong. A failure (a
failed validation, a judgment that says the task failed) puts it on probation in that
task type and overall: every output is validated until ``clearance`` consecutive
validations of tasks judged after the failure have passed; a failure during probation
restarts it. A model change (a heartbeat with another ``model_name`` or
``provider_id``) starts probation in every task type the agent has, and overall.

The stored state is one ``Probation`` per stream (a task type, or ``OVERALL``): why it
started, how many tasks the stream had then, and the consecutive passes since. It holds
no configured number: ``clearance`` is derived when a rate is asked for (from
``sentinel.aoql`` and the level's rate, ``clearance_for``), so replay with any config
rebuilds the same state, and a state whose passes reach the clearance is simply no
longer on probation. XP and levels are never touched here.

The clearance is the least ``i`` for which, over a run of ``sentinel.horizon`` tasks
after a failure found, the share of outputs that fail and go unvalidated exceeds
``sentinel.aoql`` with probability at most ``1 - sentinel.confidence`` at every failure
rate (``run_bound.run_clearance``, the exact CSP-1 chain). With ``horizon`` 0 it is
``clearance_for(f, aoql)``: the smallest ``i`` whose CSP-1 average outgoing quality
limit, ``max_p p (1-f) q^i / (f + (1-f) q^i)`` with ``q = 1 - p``, is at most ``aoql``
(a long-run mean only). docs/oracle.md derives both and states their assumptions.
"""

from __future__ import annotations

import math
from enum import StrEnum
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agentladder.domain.judgment import Judgment, TaskPosition
from agentladder.domain.levels import LEVELS, Level
from agentladder.domain.privileges import standing
from agentladder.domain.profile import AgentProfile, Probation, ProbationCause
from agentladder.domain.rules import OracleRules
from agentladder.domain.run_bound import run_clearance

__all__ = [
    "OVERALL",
    "EffectiveRate",
    "ProbationCause",
    "RateReason",
    "SentinelSettings",
    "aoq",
    "clearance_for",
    "effective_rate",
    "evidence_rate",
    "failures",
    "on_failure",
    "on_judgment",
    "on_model_change",
    "on_validation",
    "rate_for",
    "streams_on_probation",
]

OVERALL = "*"
"""The stream of all the agent's tasks (a task type cannot be ``*``)."""

MAX_CLEARANCE = 100_000


class RateReason(StrEnum):
    """Why an agent is validated at the rate it is."""

    LEVEL = "level"  # its level's rate (the specification's)
    AUDIT = "audit"  # an expert's audit rate under the adaptive policy
    PROBATION = "probation"  # every output, after a failure
    MODEL_CHANGE = "model_change"  # every output, after a model change
    EVIDENCE = "evidence"  # what the agent's failure share needs to keep the AOQL bound


class SentinelSettings(BaseModel):
    """The ``sentinel:`` section: how validation rates react to failures."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    policy: Literal["adaptive", "level"] = Field(
        default="adaptive",
        description="adaptive: probation after a failure or a model change; level: the"
        " specification's rates only",
    )
    aoql: float = Field(
        default=0.02,
        gt=0.0,
        lt=1.0,
        description="bound on the share of outputs that fail and go unvalidated, per run of"
        " `horizon` tasks (the long run when `horizon` is 0)",
    )
    validator_miss_rate: float = Field(
        default=0.0,
        ge=0.0,
        lt=1.0,
        description="share of failures the validator misses; the clearances are derived"
        " with it so the bound on unvalidated failures still holds",
    )
    horizon: int = Field(
        default=1000,
        ge=0,
        le=100_000,
        description="tasks a run spans: the bound holds per run of this many tasks after a"
        " failure found, in a share `confidence` of runs; 0: the long-run mean only (CSP-1's"
        " AOQL)",
    )
    confidence: float = Field(
        default=0.95,
        gt=0.0,
        lt=1.0,
        description="share of runs of `horizon` tasks that must keep the bound",
    )
    evidence: bool = Field(
        default=True,
        description="adaptive policy: never validate below the rate the agent's failure share"
        " (its judged tasks, history included) needs to keep `aoql` (docs/oracle.md)",
    )
    expert_audit_rate: float = Field(
        default=0.0,
        ge=0.0,
        le=1.0,
        description="experts' sampling rate under the adaptive policy (0: on request only)",
    )


class EffectiveRate(BaseModel):
    """The rate an agent is validated at now, why, and what is left of its probation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    level_rate: float = Field(description="the level's rate, as the specification sets it")
    effective_rate: float
    reason: RateReason
    clearance: int | None = Field(description="passes that end a probation at this level")
    clearance_left: int | None = Field(description="passes still needed, while on probation")
    judged: int | None = Field(
        default=None, description="the tasks judged in this stream (the failure share's basis)"
    )
    failure_share: float | None = Field(
        default=None, description="the share of them that failed (a judgment or a validation)"
    )


def aoq(p: float, f: float, i: int) -> float:
    """CSP-1's average outgoing quality: the long-run share of outputs that fail and are
    not inspected, for failure rate ``p``, sampling fraction ``f`` and clearance ``i``."""
    qi = (1.0 - p) ** i
    return p * (1.0 - f) * qi / (f + (1.0 - f) * qi)


def _aoql(f: float, i: int) -> float:
    """``max_p aoq(p, f, i)`` by golden-section search (aoq is unimodal in p)."""
    lo, hi = 0.0, 1.0
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(80):
        a = hi - ratio * (hi - lo)
        b = lo + ratio * (hi - lo)
        if aoq(a, f, i) < aoq(b, f, i):
            lo = a
        else:
            hi = b
    return aoq((lo + hi) / 2.0, f, i)


@lru_cache(maxsize=256)
def clearance_for(f: float, aoql: float) -> int:
    """The smallest clearance ``i`` with CSP-1's AOQL at sampling fraction ``f`` <= ``aoql``.

    ``f`` = 1 needs none (every output is validated anyway). ``f`` must be in (0, 1]:
    at 0 no clearance bounds anything.
    """
    if not 0.0 < f <= 1.0:
        raise ValueError(f"sampling fraction must be in (0, 1], not {f}")
    if not 0.0 < aoql < 1.0:
        raise ValueError(f"aoql must be in (0, 1), not {aoql}")
    if f >= 1.0 or _aoql(f, 0) <= aoql:
        return 0
    lo, hi = 0, 1
    while _aoql(f, hi) > aoql:  # the AOQL falls as the clearance grows
        lo, hi = hi, hi * 2
        if hi > MAX_CLEARANCE:
            raise ValueError(f"no clearance up to {MAX_CLEARANCE} reaches aoql {aoql} at {f}")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _aoql(f, mid) > aoql:
            lo = mid
        else:
            hi = mid
    return hi


def _stream_sizes(profile: AgentProfile, task_type: str) -> dict[str, int]:
    """How many tasks the overall stream and ``task_type``'s have judged so far."""
    spec = profile.specializations.get(task_type)
    return {OVERALL: profile.stats.total_tasks, task_type: 0 if spec is None else spec.tasks_judged}


def on_failure(profile: AgentProfile, task_type: str, cause: ProbationCause) -> AgentProfile:
    """(Re)start probation in ``task_type`` and overall, counting tasks judged from now."""
    started = {
        stream: Probation(cause=cause, since=size)
        for stream, size in _stream_sizes(profile, task_type).items()
    }
    return profile.model_copy(update={"probation": {**profile.probation, **started}})


def on_judgment(profile: AgentProfile, judgment: Judgment) -> AgentProfile:
    """After a judgment is folded in: a judgment that says the task failed starts probation,
    unless it is ``history`` (past work: probation is about work validated now)."""
    if judgment.success or judgment.history:
        return profile
    return on_failure(profile, judgment.task_type, ProbationCause.FAILED_JUDGMENT)


def on_validation(
    profile: AgentProfile, judgment: Judgment, position: TaskPosition, passed: bool
) -> AgentProfile:
    """A verdict on the judged task at ``position``.

    A failure of a task judged successful starts probation (one judged failed started it
    already). A pass of a task judged successful, judged after its stream's probation
    started, counts one consecutive pass there.
    """
    if not judgment.success:
        return profile
    if not passed:
        return on_failure(profile, judgment.task_type, ProbationCause.FAILED_VALIDATION)
    positions = {OVERALL: position.overall, judgment.task_type: position.in_task_type}
    counted = {
        stream: state.model_copy(update={"passes": state.passes + 1})
        for stream, at in positions.items()
        if (state := profile.probation.get(stream)) is not None and at > state.since
    }
    if not counted:
        return profile
    return profile.model_copy(update={"probation": {**profile.probation, **counted}})


def on_model_change(profile: AgentProfile) -> AgentProfile:
    """A new model or provider: probation in every task type the agent has, and overall."""
    started = {
        OVERALL: Probation(cause=ProbationCause.MODEL_CHANGE, since=profile.stats.total_tasks)
    }
    for task_type, spec in profile.specializations.items():
        started[task_type] = Probation(cause=ProbationCause.MODEL_CHANGE, since=spec.tasks_judged)
    return profile.model_copy(update={"probation": {**profile.probation, **started}})


def failures(profile: AgentProfile | None, task_type: str | None) -> tuple[int, int]:
    """The tasks judged in the stream and how many of them failed (a failed judgment, or a
    failed validation of a successful one), history included."""
    if profile is None:
        return 0, 0
    if task_type is None:
        stats = profile.stats
        return stats.total_tasks, stats.total_tasks - stats.successful_tasks
    spec = profile.specializations.get(task_type)
    if spec is None:
        return 0, 0
    return spec.tasks_judged, spec.tasks_judged - spec.tasks_completed


def evidence_rate(failure_share: float, aoql: float, miss: float = 0.0) -> float:
    """The least sampling rate ``r`` that keeps the share of outputs that fail and go
    unvalidated at most ``aoql``, for a failure share ``p`` and a validator that misses a
    share ``miss`` of failures: ``p (1 - r (1 - miss)) <= aoql``."""
    if failure_share <= aoql:
        return 0.0
    return min(1.0, (1.0 - aoql / failure_share) / (1.0 - miss))


def _clearance(f: float, settings: SentinelSettings) -> int:
    """The clearance at sampling fraction ``f``: per run of ``horizon`` tasks
    (``run_bound.run_clearance``), or CSP-1's long-run AOQL when ``horizon`` is 0."""
    miss = settings.validator_miss_rate
    if settings.horizon == 0:
        return clearance_for(f, settings.aoql * (1.0 - miss))
    return run_clearance(f, settings.aoql, settings.horizon, settings.confidence, miss)


def _sampling_fraction(level: Level, level_rate: float, settings: SentinelSettings) -> float:
    if level is Level.EXPERT and level_rate == 0.0:
        return settings.expert_audit_rate
    return level_rate


def effective_rate(
    profile: AgentProfile | None,
    task_type: str | None,
    level: Level,
    level_rate: float,
    settings: SentinelSettings,
    fallback_rate: float,
) -> EffectiveRate:
    """The rate to validate at: the level's, an expert's audit rate, or 1.0 on probation;
    under the adaptive policy never below what the stream's failure share needs
    (``evidence_rate``).

    ``fallback_rate`` is the sampling fraction a clearance is derived from when the
    agent's own is 0 (an expert sampled on request only): the smallest positive rate of
    the privileges table.
    """
    if settings.policy == "level":
        return EffectiveRate(
            level_rate=level_rate, effective_rate=level_rate, reason=RateReason.LEVEL,
            clearance=None, clearance_left=None,
        )  # fmt: skip
    f = _sampling_fraction(level, level_rate, settings)
    basis = f if f > 0.0 else fallback_rate
    clearance = _clearance(basis, settings)
    reason = RateReason.AUDIT if f != level_rate else RateReason.LEVEL
    judged, failed = failures(profile, task_type)
    share = failed / judged if judged else None
    state = None if profile is None else profile.probation.get(task_type or OVERALL)
    if state is not None and state.passes < clearance and f < 1.0:
        why = (
            RateReason.MODEL_CHANGE
            if state.cause is ProbationCause.MODEL_CHANGE
            else RateReason.PROBATION
        )
        return EffectiveRate(
            level_rate=level_rate, effective_rate=1.0, reason=why, clearance=clearance,
            clearance_left=clearance - state.passes, judged=judged, failure_share=share,
        )  # fmt: skip
    if settings.evidence and share is not None:
        needed = evidence_rate(share, settings.aoql, settings.validator_miss_rate)
        if needed > f:
            f, reason = needed, RateReason.EVIDENCE
    return EffectiveRate(
        level_rate=level_rate, effective_rate=f, reason=reason, clearance=clearance,
        clearance_left=None, judged=judged, failure_share=share,
    )  # fmt: skip


def rate_for(
    profile: AgentProfile | None,
    rules: OracleRules,
    settings: SentinelSettings,
    task_type: str | None = None,
) -> EffectiveRate:
    """``effective_rate`` at the agent's standing (overall, or in ``task_type``)."""
    level = standing(profile, task_type)
    level_rate = rules.privileges.for_level(level).validation_rate
    return effective_rate(profile, task_type, level, level_rate, settings, _fallback(rules))


def _fallback(rules: OracleRules) -> float:
    """The smallest positive rate of the privileges table (1.0 if none is)."""
    rates = [rules.privileges.for_level(level).validation_rate for level in LEVELS]
    return min((rate for rate in rates if rate > 0.0), default=1.0)


def streams_on_probation(
    profile: AgentProfile, rules: OracleRules, settings: SentinelSettings
) -> dict[str, EffectiveRate]:
    """Each stream (a task type, or ``*``) of ``profile`` that is on probation now."""
    found = {}
    for stream in sorted(profile.probation):
        rate = rate_for(profile, rules, settings, None if stream == OVERALL else stream)
        if rate.clearance_left is not None:
            found[stream] = rate
    return found
