"""Probation as CSP-1: clearances from the AOQL, transitions, and the effective rate."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentladder.domain.judgment import Judgment, TaskPosition
from agentladder.domain.levels import Level
from agentladder.domain.probation import (
    OVERALL,
    RateReason,
    SentinelSettings,
    aoq,
    clearance_for,
    on_judgment,
    on_model_change,
    on_validation,
    rate_for,
    streams_on_probation,
)
from agentladder.domain.profile import AgentProfile, LifetimeStats, ProbationCause, Specialization
from agentladder.domain.rules import OracleRules
from agentladder.domain.run_bound import run_clearance

RULES = OracleRules()
ADAPTIVE = SentinelSettings(evidence=False)
"""CSP-1 alone: these profiles are made by hand, their success counts not kept in step
(the evidence floor has its own tests, ``test_sentinel_evidence.py``)."""
# the default per-run clearances (horizon 1000, confidence 0.95; tests/domain/test_run_bound.py)
TRUSTED = run_clearance(0.05, ADAPTIVE.aoql, ADAPTIVE.horizon, ADAPTIVE.confidence)
AUDITED = run_clearance(0.02, ADAPTIVE.aoql, ADAPTIVE.horizon, ADAPTIVE.confidence)


def worst_aoq(f: float, i: int) -> float:
    """The AOQ's maximum over a fine grid of failure rates."""
    return max(aoq(k / 20_000, f, i) for k in range(1, 20_000))


@pytest.mark.parametrize("f", [0.2, 0.1, 0.05, 0.02])
@pytest.mark.parametrize("aoql", [0.01, 0.02, 0.05])
def test_clearance_is_the_least_that_bounds_the_aoql(f: float, aoql: float) -> None:
    """The derived clearance keeps CSP-1's AOQL at or below aoql; one less does not."""
    i = clearance_for(f, aoql)
    assert worst_aoq(f, i) <= aoql
    assert worst_aoq(f, i - 1) > aoql


def test_default_clearances_per_level() -> None:
    """At aoql 0.02: reliable (20 %) needs 36 passes, trusted (5 %) 75, rookies none."""
    assert clearance_for(0.2, 0.02) == 36
    assert clearance_for(0.05, 0.02) == 75
    assert clearance_for(1.0, 0.02) == 0
    with pytest.raises(ValueError, match="sampling fraction"):
        clearance_for(0.0, 0.02)


def trusted(tasks: int = 10) -> AgentProfile:
    """A trusted agent (overall and in sql) with ``tasks`` judged sql tasks."""
    spec = Specialization(xp=300, level=Level.TRUSTED, tasks_judged=tasks, tasks_completed=tasks)
    stats = LifetimeStats(total_tasks=tasks, successful_tasks=tasks, total_xp_earned=600)
    return AgentProfile(
        id="a", xp=600, level=Level.TRUSTED, specializations={"sql": spec}, stats=stats
    )


def judged(n: int, success: bool = True) -> tuple[Judgment, TaskPosition]:
    """The n-th sql task and its position."""
    judgment = Judgment(agent_id="a", contract_id=f"c{n}", task_type="sql", success=success)
    return judgment, TaskPosition(overall=n, in_task_type=n)


def test_nothing_failed_means_the_level_rate() -> None:
    """Without any failure the effective rate is exactly the level's, reason level."""
    for task_type in (None, "sql", "poetry"):
        rate = rate_for(trusted(), RULES, ADAPTIVE, task_type)
        assert rate.effective_rate == rate.level_rate
        assert rate.reason is RateReason.LEVEL
        assert rate.clearance_left is None
    assert rate_for(trusted(), RULES, ADAPTIVE, "sql").level_rate == 0.05


def test_failure_then_clearance_passes_then_back() -> None:
    """A failed validation: rate 1.0 until the clearance passes of later tasks, then 0.05."""
    profile = trusted()
    judgment, position = judged(10)
    profile = on_validation(profile, judgment, position, passed=False)
    rate = rate_for(profile, RULES, ADAPTIVE, "sql")
    assert (rate.effective_rate, rate.reason, rate.clearance_left) == (
        1.0, RateReason.PROBATION, TRUSTED,
    )  # fmt: skip
    again = on_validation(profile, *judged(9), passed=True)  # judged before: no count
    assert again == profile
    for n in range(11, 11 + TRUSTED):
        grown = profile.model_copy(
            update={
                "stats": profile.stats.model_copy(update={"total_tasks": n}),
                "specializations": {
                    "sql": profile.specializations["sql"].model_copy(update={"tasks_judged": n})
                },
            }
        )
        profile = on_validation(grown, *judged(n), passed=True)
        left = rate_for(profile, RULES, ADAPTIVE, "sql").clearance_left
        assert left == (TRUSTED - (n - 10) or None)
    rate = rate_for(profile, RULES, ADAPTIVE, "sql")
    assert (rate.effective_rate, rate.reason) == (0.05, RateReason.LEVEL)
    assert streams_on_probation(profile, RULES, ADAPTIVE) == {}


def test_a_failure_in_probation_restarts_it() -> None:
    """Passes, then another failure: clearance_left is the whole clearance again."""
    profile = on_validation(trusted(), *judged(10), passed=False)
    profile = on_validation(profile, *judged(11), passed=True)
    profile = on_validation(profile, *judged(12), passed=True)
    assert rate_for(profile, RULES, ADAPTIVE, "sql").clearance_left == TRUSTED - 2
    profile = on_validation(profile, *judged(12, success=True), passed=False)
    assert rate_for(profile, RULES, ADAPTIVE, "sql").clearance_left == TRUSTED


def test_a_failed_judgment_and_a_model_change_start_probation() -> None:
    """success=False starts it (reason probation); a model change too, in every stream."""
    judgment, _ = judged(11, success=False)
    failed = on_judgment(trusted(), judgment)
    assert failed.probation["sql"].cause is ProbationCause.FAILED_JUDGMENT
    assert rate_for(failed, RULES, ADAPTIVE).reason is RateReason.PROBATION
    assert on_judgment(trusted(), judged(11)[0]) == trusted()
    changed = on_model_change(trusted())
    assert set(changed.probation) == {OVERALL, "sql"}
    for task_type in (None, "sql"):
        rate = rate_for(changed, RULES, ADAPTIVE, task_type)
        assert (rate.effective_rate, rate.reason) == (1.0, RateReason.MODEL_CHANGE)
    assert set(streams_on_probation(changed, RULES, ADAPTIVE)) == {OVERALL, "sql"}


def test_level_policy_is_the_specification_exactly() -> None:
    """policy level: the level's rate whatever failed, no clearance."""
    level = SentinelSettings(policy="level")
    failed = on_model_change(on_validation(trusted(), *judged(10), passed=False))
    rate = rate_for(failed, RULES, level, "sql")
    assert (rate.effective_rate, rate.reason, rate.clearance) == (0.05, RateReason.LEVEL, None)


def test_experts_audit_rate_and_probation_after_a_requested_failure() -> None:
    """An expert: 0 by default, the audit rate when set; a failure found puts it on
    probation with the clearance of the smallest positive rate (trusted's)."""
    expert = AgentProfile(id="e", xp=3000, level=Level.EXPERT)
    assert rate_for(expert, RULES, ADAPTIVE).effective_rate == 0.0
    audited = rate_for(expert, RULES, SentinelSettings(expert_audit_rate=0.02))
    assert (audited.effective_rate, audited.reason, audited.clearance) == (
        0.02, RateReason.AUDIT, AUDITED,
    )  # fmt: skip
    failed = on_model_change(expert)
    rate = rate_for(failed, RULES, ADAPTIVE)
    assert (rate.effective_rate, rate.clearance_left) == (1.0, TRUSTED)


def test_miss_rate_tightens_the_clearance() -> None:
    """A validator that misses 10 % of failures: a longer clearance, per run (the chain
    with the miss rate) and long-run (CSP-1's AOQL for aoql * 0.9)."""
    missing = SentinelSettings(validator_miss_rate=0.1)
    per_run = run_clearance(0.05, 0.02, 1000, 0.95, 0.1)
    assert rate_for(trusted(), RULES, missing).clearance == per_run > TRUSTED
    long_run = SentinelSettings(validator_miss_rate=0.1, horizon=0)
    assert rate_for(trusted(), RULES, long_run).clearance == clearance_for(0.05, 0.018)
    assert clearance_for(0.05, 0.018) > clearance_for(0.05, 0.02)


@settings(max_examples=200, deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(["pass", "fail", "judged_fail", "model"]), st.integers(1, 30)),
        max_size=40,
    )
)
def test_probation_never_touches_xp_levels_or_stats(steps: list[tuple[str, int]]) -> None:
    """Any sequence of verdicts, failed judgments and model changes leaves all but the
    probation field as it was."""
    start = trusted(30)
    profile = start
    for kind, n in steps:
        if kind == "model":
            profile = on_model_change(profile)
        elif kind == "judged_fail":
            profile = on_judgment(profile, judged(n, success=False)[0])
        else:
            profile = on_validation(profile, *judged(n), passed=kind == "pass")
    assert profile.model_dump(exclude={"probation"}) == start.model_dump(exclude={"probation"})


def test_a_failed_judgment_of_history_starts_no_probation() -> None:
    """History is evidence, not probation: a failed judgment marked history (an import)
    leaves the streams as they were; the same judgment live starts probation."""
    failed = Judgment(agent_id="a", contract_id="c1", task_type="sql", success=False)
    before = trusted()
    assert on_judgment(before, failed.model_copy(update={"history": True})) == before
    assert OVERALL in on_judgment(before, failed).probation
