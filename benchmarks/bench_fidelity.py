"""Does the skill estimate tell good agents from bad ones? Against rank, XP, avg_score,
openskill and Bradley-Terry, on simulated fleets whose true quality is known.

Each simulated deliberation (``fidelity_fleet``) goes through the service's real path:
``Orchestrator.report`` with the raw peer scores (``POST /deliberations/results``), which
ranks it (floor-based rank, avg_score), has the Oracle judge each agent (XP) and feeds the
skill model, on the in-memory store. openskill's Plackett-Luce and a Bradley-Terry fit
(choix) see the same deliberations' aggregated scores. After 25, 50, 100 and 500
deliberations: Kendall τ-b against the true order, overall (truth: the mean over task
types) and per task type (mean over the three); for the skill estimate also the coverage
of its 95% intervals and the share of interval-separated pairs in the wrong order.
Medians over the seeds.

Targets: skill τ at least the best other's (within 0.02) at 100 and 500; at least 0.1
above avg_score and openskill under leniency and collusion; coverage 90-98%; wrong order
at most 2.5%.

Run: ``make bench`` or ``.venv/bin/python -m benchmarks fidelity``; ``FIDELITY_SEEDS=N``
(default 5), ``FIDELITY_ONLY=<part of a scenario's name>``, ``FIDELITY_RULES=<JSON of
skill rule overrides>`` for experiments.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import statistics

from agentladder.domain.external import ExternalDeliberation
from agentladder.domain.scoring import aggregate_peer_scores
from agentladder.domain.skill.board import skill_view
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.state import new_skill
from agentladder.services.agents.registry import Registry
from agentladder.services.clock import FixedClock
from agentladder.services.deliberations.orchestrator import Orchestrator
from agentladder.services.oracle.service import Oracle
from agentladder.services.skill.service import SkillService
from agentladder.store.memory import MemoryStore
from benchmarks.fidelity_fleet import (
    TASK_TYPES,
    Fleet,
    Scenario,
    SimDeliberation,
    make_fleet,
    stream,
)
from benchmarks.fidelity_methods import BradleyTerry, OpenSkill, kendall_tau, separated_wrong

CHECKPOINTS = (25, 50, 100, 500)
METHODS = ("skill", "rank", "xp", "avg_score", "openskill", "bradley_terry")
SCENARIOS = (
    Scenario("8 agents, noise 0.5", agents=8, noise=0.5),
    Scenario("8 agents, noise 1.5", agents=8, noise=1.5),
    Scenario("30 agents, noise 0.5", agents=30, noise=0.5),
    Scenario("30 agents, noise 1.5", agents=30, noise=1.5),
    Scenario("8 agents, leniency ±1", agents=8, noise=0.5, leniency=1.0),
    Scenario("30 agents, leniency ±1, noise 1.5", agents=30, noise=1.5, leniency=1.0),
    Scenario("8 agents, 2 colluders", agents=8, noise=0.5, colluders=2),
    Scenario("30 agents, 2 colluders, leniency ±1", agents=30, noise=0.5, leniency=1.0,
             colluders=2),
)  # fmt: skip
ADVERSARIAL = ("leniency", "colluders")


def report_of(sim: SimDeliberation) -> ExternalDeliberation:
    """The deliberation as ``POST /deliberations/results`` carries it, raw scores included."""
    rounds = []
    for number in sorted({r for _, _, r, _ in sim.scores}):
        agents = {}
        for author in sim.agents:
            given = {e: s for e, a, r, s in sim.scores if a == author and r == number}
            agents[author] = {
                "aggregated_score": aggregate_peer_scores(author, given),
                "evaluations": given,
            }
        rounds.append({"agents": agents})
    return ExternalDeliberation.model_validate(
        {"deliberation_id": f"sim-{sim.index}", "task_type": sim.task_type, "rounds": rounds}
    )


def deliberation_scores(report: ExternalDeliberation) -> dict[str, float]:
    """Each agent's mean aggregated score over the rounds (what the peers rank by)."""
    out: dict[str, list[float]] = {}
    for reported in report.rounds:
        for agent, result in reported.agents.items():
            if result.aggregated_score is not None:
                out.setdefault(agent, []).append(result.aggregated_score)
    return {a: statistics.fmean(v) for a, v in out.items()}


async def checkpoint(
    fleet: Fleet, skill: SkillService, store: MemoryStore, peers: tuple[OpenSkill, BradleyTerry]
) -> dict[str, float]:
    """Every method's τ overall and per type; the skill's coverage and wrong-order share."""
    openskill, bt = peers
    truth = {a: fleet.overall(a) for a in fleet.agents}
    stats = await store.list_stats()
    profiles = {p.id: p for p in await store.list_profiles()}
    states = {s.agent_id: s for s in await store.list_skills()}
    fleet_skill = await store.get_fleet_skill()
    now = skill.now()
    rules = skill.rules
    out: dict[str, float] = {}
    covered: list[float] = []
    separated = wrong = 0
    for scope in (None, *TASK_TYPES):
        real = truth if scope is None else {a: fleet.quality[a][scope] for a in fleet.agents}
        views = {
            a: skill_view(states.get(a) or new_skill(a, rules), fleet_skill, scope, now, rules)
            for a in fleet.agents
        }
        estimates: dict[str, dict[str, float]] = {
            "skill": {a: v.skill for a, v in views.items()},
            "rank": {a: float(stats[a].value.rank) if a in stats else 0.0 for a in real},
            "openskill": openskill.mu(scope),
            "bradley_terry": bt.strengths(scope, fleet.agents),
        }
        if scope is None:
            estimates["xp"] = {a: float(profiles[a].xp) if a in profiles else 0.0 for a in real}
            estimates["avg_score"] = {
                a: stats[a].value.avg_score if a in stats else 0.0 for a in real
            }
        else:
            specs = {
                a: spec
                for a, p in profiles.items()
                if (spec := p.specializations.get(scope)) is not None
            }
            estimates["xp"] = {a: float(specs[a].xp) if a in specs else 0.0 for a in real}
            estimates["avg_score"] = {a: specs[a].avg_score if a in specs else 0.0 for a in real}
        key = "overall" if scope is None else "type"
        for method in METHODS:
            tau = kendall_tau(estimates[method], real)
            name = f"{method}/{key}"
            out[name] = out.get(name, 0.0) + (tau if scope is None else tau / len(TASK_TYPES))
        covered.extend(1.0 if v.low <= real[a] <= v.high else 0.0 for a, v in views.items())
        apart, misordered = separated_wrong(
            {a: (v.skill, v.low, v.high) for a, v in views.items()}, real
        )
        separated += apart
        wrong += misordered
    out["coverage"] = statistics.fmean(covered)
    out["wrong_order"] = wrong / separated if separated else 0.0
    return out


async def run(scenario: Scenario, seed: int) -> dict[int, dict[str, float]]:
    """One seeded fleet through ``max(CHECKPOINTS)`` reported deliberations."""
    rng = random.Random(seed)
    fleet = make_fleet(scenario, rng)
    sims = stream(scenario, fleet, max(CHECKPOINTS), rng)
    store = MemoryStore()
    clock = FixedClock()
    overrides = json.loads(os.environ.get("FIDELITY_RULES", "{}"))
    skill = SkillService(store, SkillRules.model_validate(overrides), clock=clock)
    oracle = Oracle(store, clock=clock, skill=skill)
    registry = Registry(store, clock=clock, skill=skill)
    orchestrator = Orchestrator(
        store=store, registry=registry, oracle=oracle, providers={}, clock=clock
    )
    peers = (OpenSkill(), BradleyTerry())
    found: dict[int, dict[str, float]] = {}
    for sim in sims:
        report = report_of(sim)
        await orchestrator.report(report)
        await orchestrator.settle()
        scores = deliberation_scores(report)
        peers[0].rate(sim.task_type, scores)
        peers[1].add(sim.task_type, scores)
        clock.advance(60.0)
        if sim.index + 1 in CHECKPOINTS:
            found[sim.index + 1] = await checkpoint(fleet, skill, store, peers)
    return found


def _median(runs: list[dict[int, dict[str, float]]], at: int, name: str) -> float:
    return statistics.median(r[at][name] for r in runs)


def verdicts(scenario: Scenario, runs: list[dict[int, dict[str, float]]]) -> list[str]:
    """The targets this scenario misses (empty: all met)."""
    missed = []
    adversarial = scenario.leniency > 0 or scenario.colluders > 0
    for at in (100, 500):
        for key in ("overall", "type"):
            mine = _median(runs, at, f"skill/{key}")
            others = [_median(runs, at, f"{m}/{key}") for m in METHODS if m != "skill"]
            if mine < max(others) - 0.02:
                missed.append(f"τ {key} at {at}: {mine:.3f} < best other {max(others):.3f}")
            if adversarial:
                for peer in ("avg_score", "openskill"):
                    theirs = _median(runs, at, f"{peer}/{key}")
                    if mine < theirs + 0.1:
                        missed.append(f"τ {key} at {at}: {mine:.3f} < {peer} {theirs:.3f} + 0.1")
        coverage = _median(runs, at, "coverage")
        if not 0.90 <= coverage <= 0.98:
            missed.append(f"coverage at {at}: {coverage:.3f}")
        wrong = _median(runs, at, "wrong_order")
        if wrong > 0.025:
            missed.append(f"wrong order at {at}: {wrong:.3f}")
    return missed


def main() -> None:
    """Print, per scenario and checkpoint, the medians over the seeds, and the verdicts."""
    seeds = int(os.environ.get("FIDELITY_SEEDS", "5"))
    only = os.environ.get("FIDELITY_ONLY")
    print(f"seeds 0..{seeds - 1}; medians; τ-b against the true order (per type: mean of 3)")
    header = " ".join(f"{m[:9]:>9}" for m in METHODS)
    for scenario in SCENARIOS:
        if only and only not in scenario.name:
            continue
        runs = [asyncio.run(run(scenario, seed)) for seed in range(seeds)]
        print(f"\n{scenario.name}")
        print(f"  {'at':>4} {'scope':>7} {header} {'coverage':>9} {'wrong':>6}")
        for at in CHECKPOINTS:
            for key in ("overall", "type"):
                row = " ".join(f"{_median(runs, at, f'{m}/{key}'):9.3f}" for m in METHODS)
                tail = ""
                if key == "overall":
                    tail = (
                        f" {_median(runs, at, 'coverage'):9.3f}"
                        f" {_median(runs, at, 'wrong_order'):6.3f}"
                    )
                print(f"  {at:>4} {key:>7} {row}{tail}")
        missed = verdicts(scenario, runs)
        print("  targets: " + ("all met" if not missed else "MISSED: " + "; ".join(missed)))


if __name__ == "__main__":
    main()
