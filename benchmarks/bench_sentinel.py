"""Unvalidated failures and audit cost: the specification's level-only Sentinels against
the adaptive ones (probation, CSP-1), in a seeded fleet simulation.

Every task goes through the real code: ``Sentinel.should_validate`` decides, the Oracle
judges the task (XP and levels as today), and a validated task's verdict goes through
``Sentinel.record_validation``; a degradation announced by a new model goes through
``Registry.heartbeat``. In-memory store. A failure is hidden from the judge (the judgment
says success): only a validation can find it. The validator is perfect, or misses 10 %
of failures.

Fleet of one run: six steady agents with hidden failure rates spread over 0.5-5 %
(0.5, 1.4, 2.3, 3.2, 4.1, 5 %: 3.2 % is near the failure rate at which CSP-1 lets the
most through), and two that fail 1 % of the time until they reach trusted, then 20 %:
one silently (same name, same model), one announced by a heartbeat with a new model
name. Each agent does ``TASKS`` tasks of one task type; experts are audited at
``EXPERT_AUDIT`` under the adaptive policy (0 would put them outside any bound).

Per agent and run: the share of its tasks that failed and were not validated, the share
validated (audit cost) and, for a degrader, the tasks from the degradation until its
effective rate is 1.0. Seeds: run r uses ``SEED + r`` for failures and scores and
``r`` for the Sentinel, the same for every policy (common random numbers).

Run: ``make bench`` or ``.venv/bin/python -m benchmarks.bench_sentinel [--runs N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from agentladder.domain.levels import Level
from agentladder.domain.probation import SentinelSettings
from agentladder.domain.rules import OracleRules
from agentladder.services.agents.registry import Registry
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.sentinel import Sentinel
from agentladder.services.oracle.service import Oracle
from agentladder.store.memory import MemoryStore
from benchmarks.common import percentile
from benchmarks.sentinel_longrun import LongRun, long_run

RUNS = 200
SEED = 13_000
TASKS = 800
AOQL = 0.02
EXPERT_AUDIT = 0.02
STEADY = (0.005, 0.014, 0.023, 0.032, 0.041, 0.05)
LOW = (0.002, 0.004, 0.006, 0.008, 0.01, 0.01)  # every agent at most aoql / 2
DEGRADE_FROM, DEGRADE_TO = 0.01, 0.20
TASK_TYPE = "work"


@dataclass(frozen=True)
class Policy:
    """A named sentinel configuration."""

    name: str
    settings: SentinelSettings


LEVEL = Policy("level", SentinelSettings(policy="level"))


@dataclass(frozen=True)
class AgentPlan:
    """One simulated agent: its failure rate, and how it degrades (if it does)."""

    name: str
    rate: float
    degrade: str | None = None  # None, "silent" or "announced"


@dataclass(frozen=True)
class Outcome:
    """One agent's figures in one run."""

    name: str
    unvalidated_failures: float
    audit: float
    missed: float  # failures validated but passed by the validator
    to_full: int | None  # tasks from degradation to effective rate 1.0 (None: never)


def fleet(steady: tuple[float, ...], degraders: bool) -> list[AgentPlan]:
    """The steady agents, then (when asked) the silent and the announced degrader."""
    plans = [AgentPlan(f"steady-{i}-{rate:.3f}", rate) for i, rate in enumerate(steady)]
    if degraders:
        plans += [
            AgentPlan("degrades-silently", DEGRADE_FROM, "silent"),
            AgentPlan("degrades-new-model", DEGRADE_FROM, "announced"),
        ]
    return plans


async def simulate(
    run: int, plans: list[AgentPlan], policy: Policy, miss: float, tasks: int
) -> list[Outcome]:
    """One seeded run of the fleet under ``policy``; each agent's outcome."""
    store = MemoryStore()
    oracle = Oracle(store, OracleRules(), sentinel=policy.settings)
    sentinel = Sentinel(oracle, seed=run)
    registry = Registry(store, oracle=oracle)
    outcomes = []
    for index, plan in enumerate(plans):
        rng = random.Random(SEED + run * 100 + index)
        await registry.heartbeat({"name": plan.name, "provider_id": "sim", "model_name": "m1"})
        rate, degraded_at, full_at = plan.rate, None, None
        unvalidated = validated = missed = 0
        for n in range(tasks):
            decision = await sentinel.should_validate(plan.name, TASK_TYPE)
            if plan.degrade and degraded_at is None and decision.level.value == "trusted":
                rate, degraded_at = DEGRADE_TO, n
                if plan.degrade == "announced":
                    beat = {"name": plan.name, "provider_id": "sim", "model_name": "m2"}
                    await registry.heartbeat(beat)
                    decision = await sentinel.should_validate(plan.name, TASK_TYPE)
            if degraded_at is not None and full_at is None and decision.rate == 1.0:
                full_at = n
            failed = rng.random() < rate
            score = min(10.0, max(0.0, rng.gauss(7.5, 1.0)))
            caught = failed and rng.random() >= miss
            contract = f"c{n}"
            await oracle.submit_for_judgment(
                JudgmentRequest(agent_id=plan.name, contract_id=contract, task_type=TASK_TYPE,
                                score=round(score, 2)),
                evidence=False,
            )  # fmt: skip
            if decision.validate_output:
                validated += 1
                missed += failed and not caught
                await sentinel.record_validation(plan.name, contract, passed=not caught)
            else:
                unvalidated += failed
        outcomes.append(
            Outcome(
                name=plan.name, unvalidated_failures=unvalidated / tasks, audit=validated / tasks,
                missed=missed / tasks,
                to_full=None if degraded_at is None or full_at is None else full_at - degraded_at,
            )
        )  # fmt: skip
    return outcomes


def _one(job: tuple[int, list[AgentPlan], Policy, float, int]) -> list[Outcome]:
    run, plans, policy, miss, tasks = job
    return asyncio.run(simulate(run, plans, policy, miss, tasks))


def scenario(
    title: str, plans: list[AgentPlan], policies: tuple[Policy, ...], miss: float, runs: int,
    pool: ProcessPoolExecutor, tasks: int = TASKS,
) -> dict[str, list[list[Outcome]]]:  # fmt: skip
    """Every policy over ``runs`` seeded runs; print the per-agent figures."""
    print(f"\n## {title} ({runs} runs x {len(plans)} agents x {tasks} tasks, miss rate {miss})")
    results = {}
    for policy in policies:
        jobs = [(run, plans, policy, miss, tasks) for run in range(runs)]
        results[policy.name] = list(pool.map(_one, jobs))
    for policy in policies:
        print(f"\npolicy {policy.name}:")
        print(
            f"  {'agent':<22} {'unval. median':>13} {'p95':>7} {'<= aoql':>8}"
            f" {'audit median':>12} {'missed med.':>11} {'to full (median, runs)':>24}"
        )
        per_run = results[policy.name]
        for i, plan in enumerate(plans):
            shares = [outcomes[i].unvalidated_failures for outcomes in per_run]
            audits = [outcomes[i].audit for outcomes in per_run]
            missed = [outcomes[i].missed for outcomes in per_run]
            within = sum(share <= AOQL for share in shares) / len(shares)
            fulls = [full for o in per_run if (full := o[i].to_full) is not None]
            to_full = (
                f"{statistics.median(fulls):.0f} ({len(fulls)}/{len(per_run)})"
                if fulls
                else f"never (0/{len(per_run)})"
            )
            print(
                f"  {plan.name:<22} {statistics.median(shares):>13.4f}"
                f" {percentile(shares, 95):>7.4f} {within:>8.1%} {statistics.median(audits):>12.3f}"
                f" {statistics.median(missed):>11.4f} {to_full:>24}"
            )
        fleet_audit = [statistics.fmean(o.audit for o in outcomes) for outcomes in per_run]
        median_audit = statistics.median(fleet_audit)
        print(f"  fleet audit cost (share of tasks validated): median {median_audit:.3f}")
    return results


HORIZON = 1000  # sentinel.horizon's default: the run the per-run clearance is derived for
RUN_RATES = (0.01, 0.02, 0.03, 0.05, 0.1, 0.2)
DEFAULT = SentinelSettings(expert_audit_rate=EXPERT_AUDIT)  # horizon 1000, confidence 0.95
LONG_RUN = SentinelSettings(expert_audit_rate=EXPERT_AUDIT, horizon=0)  # CSP-1's AOQL only
DECLARED = SentinelSettings(expert_audit_rate=EXPERT_AUDIT, validator_miss_rate=0.1)
# name, level, settings, start ("probation": a failure was just found), validator miss rate
RUN_CONFIGS = (
    ("trusted, level", Level.TRUSTED, LEVEL.settings, "level", 0.0),
    ("trusted, after a failure", Level.TRUSTED, DEFAULT, "probation", 0.0),
    ("trusted, never failed", Level.TRUSTED, DEFAULT, "level", 0.0),
    ("trusted, after a failure, horizon 0", Level.TRUSTED, LONG_RUN, "probation", 0.0),
    ("expert 0.02, after a failure", Level.EXPERT, DEFAULT, "probation", 0.0),
    ("expert 0.02, never failed", Level.EXPERT, DEFAULT, "level", 0.0),
    ("trusted, after, miss 0.1", Level.TRUSTED, DEFAULT, "probation", 0.1),
    ("trusted, after, miss 0.1 declared", Level.TRUSTED, DECLARED, "probation", 0.1),
)
VISIBLE = (0.0, 0.25, 0.5, 1.0)
DEGRADE_AFTER = 200  # tasks at 1 % before the agent fails 20 % of the time


def run_bounds(runs: int, pool: ProcessPoolExecutor) -> None:
    """One agent at one level over a run of ``HORIZON`` tasks (``sentinel_longrun``)."""
    print(f"\n## per-run bound: one agent at one level, {HORIZON} tasks, {runs} runs")
    print(f"  {'config':<36} {'p':>5} {'unval. median':>13} {'p95':>7} {'<= 0.02':>8}"
          f" {'audit median':>12}")  # fmt: skip
    for name, level, settings, start, miss in RUN_CONFIGS:
        for rate in RUN_RATES:
            jobs = [
                LongRun(level, rate, settings, HORIZON, SEED + r, start=start, miss=miss)
                for r in range(runs)
            ]
            results = list(pool.map(long_run, jobs, chunksize=10))
            shares = [result.unvalidated for result in results]
            within = sum(share <= AOQL for share in shares) / len(shares)
            print(
                f"  {name:<36} {rate:>5} {statistics.median(shares):>13.4f}"
                f" {percentile(shares, 95):>7.4f} {within:>8.1%}"
                f" {statistics.median(result.audit for result in results):>12.3f}"
            )


def degradations(runs: int, pool: ProcessPoolExecutor) -> None:
    """An agent failing 1 % of the time degrades to 20 % after ``DEGRADE_AFTER`` tasks;
    a share of its failures is seen by the judge (a failed judgment)."""
    print(
        f"\n## degradation at task {DEGRADE_AFTER} from {DEGRADE_FROM} to {DEGRADE_TO},"
        f" {HORIZON} tasks, {runs} runs, perfect validator"
    )
    print(f"  {'level, policy':<24} {'visible':>7} {'to full median':>14} {'found':>7}"
          f" {'unval. median':>13} {'p95':>7} {'<= 0.02':>8}")  # fmt: skip
    for level, audited in ((Level.TRUSTED, "trusted"), (Level.EXPERT, "expert 0.02")):
        for visible in VISIBLE:
            for policy, settings in (("level", LEVEL.settings), ("adaptive", DEFAULT)):
                jobs = [
                    LongRun(level, DEGRADE_FROM, settings, HORIZON, SEED + r,
                            degrade_at=DEGRADE_AFTER, degrade_to=DEGRADE_TO, visible=visible)
                    for r in range(runs)
                ]  # fmt: skip
                results = list(pool.map(long_run, jobs, chunksize=10))
                fulls = [full for result in results if (full := result.to_full) is not None]
                shares = [result.unvalidated for result in results]
                within = sum(share <= AOQL for share in shares) / len(shares)
                median_full = f"{statistics.median(fulls):.0f}" if fulls else "never"
                print(
                    f"  {audited + ', ' + policy:<24} {visible:>7} {median_full:>14}"
                    f" {len(fulls):>3}/{runs:<3} {statistics.median(shares):>13.4f}"
                    f" {percentile(shares, 95):>7.4f} {within:>8.1%}"
                )


def main(
    runs: int = RUNS, jobs: int = 2, tasks: int = TASKS, only: str = "all", horizon: int = 1000
) -> None:
    """The fleet scenarios (perfect validator, imperfect one, a calm low-failure fleet)
    through the real Sentinel and Oracle, then the one-level runs (``only``: fleet,
    calm, runs)."""
    print(f"aoql {AOQL}, expert audit rate {EXPERT_AUDIT} (adaptive), seeds {SEED}+, {runs} runs")
    settings = SentinelSettings(aoql=AOQL, expert_audit_rate=EXPERT_AUDIT, horizon=horizon)
    adaptive = Policy("adaptive", settings)
    print(f"fleet: adaptive policy with sentinel.horizon {horizon}")
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        if only in ("all", "fleet"):
            plans = fleet(STEADY, True)
            scenario("perfect validator", plans, (LEVEL, adaptive), 0.0, runs, pool, tasks)
            scenario(
                "validator missing 10 % of failures", plans, (LEVEL, adaptive), 0.1, runs, pool,
                tasks,
            )  # fmt: skip
        if only in ("all", "fleet", "calm"):
            scenario(
                "every agent at most aoql/2, nothing degrades", fleet(LOW, False),
                (LEVEL, adaptive), 0.0, runs, pool, tasks,
            )  # fmt: skip
        if only in ("all", "runs"):
            run_bounds(runs, pool)
            degradations(runs, pool)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--tasks", type=int, default=TASKS, help="tasks per agent and run")
    parser.add_argument(
        "--horizon", type=int, default=1000, help="sentinel.horizon of the fleet's adaptive policy"
    )
    parser.add_argument("--only", choices=("all", "fleet", "calm", "runs"), default="all")
    arguments = parser.parse_args()
    main(arguments.runs, arguments.jobs, arguments.tasks, arguments.only, arguments.horizon)
