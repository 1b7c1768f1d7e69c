"""The peer fleets of ``bench_fidelity`` through the service's real path: each simulated
deliberation reported to ``Orchestrator.report`` with its raw peer scores (ranking,
avg_score, Oracle XP and the skill evidence on the in-memory store), the skill model fitted
at each checkpoint; openskill and a Bradley-Terry fit fed the same aggregated scores."""

from __future__ import annotations

import asyncio
import os
import random
import statistics

from agentladder.domain.external import ExternalDeliberation
from agentladder.domain.scoring import aggregate_peer_scores
from agentladder.domain.skill.board import skill_view
from agentladder.domain.skill.evidence import DeliberationEvidence, Evaluation, Evidence
from agentladder.domain.skill.rules import SkillRules
from agentladder.services.agents.registry import Registry
from agentladder.services.clock import FixedClock
from agentladder.services.deliberations.orchestrator import Orchestrator
from agentladder.services.oracle.service import Oracle
from agentladder.services.skill.service import SkillService
from agentladder.store.memory import MemoryStore
from benchmarks.fidelity_fleet import (
    SYBIL_TARGET,
    TASK_TYPES,
    Fleet,
    Scenario,
    SimDeliberation,
    make_fleet,
    stream,
)
from benchmarks.fidelity_judged import fitted
from benchmarks.fidelity_measures import Scored, measure, overall_truth, shifted
from benchmarks.fidelity_methods import BradleyTerry, OpenSkill, kendall_tau

__all__ = ["CHECKPOINTS", "METHODS", "peer_run", "report_of", "sim_evidence", "truth_of"]

CHECKPOINTS = (5, 10, 20, 25, 50, 100, 500)
METHODS = ("skill", "rank", "xp", "avg_score", "openskill", "bradley_terry")


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


def sim_evidence(sims: list[SimDeliberation]) -> list[Evidence]:
    """The deliberations as skill evidence (what ``report_of`` gives the skill model)."""
    return [
        DeliberationEvidence(
            key=f"deliberation:sim-{s.index}",
            at=1_000_000.0 + 60.0 * s.index,
            task_type=s.task_type,
            agents=s.agents,
            evaluations=tuple(
                Evaluation(evaluator=e, author=a, round=r, score=v) for e, a, r, v in s.scores
            ),
        )
        for s in sims
    ]


def truth_of(
    fleet: Fleet, sims: list[SimDeliberation], types: list[str]
) -> dict[str | None, dict[str, float]]:
    """The true skills: the scores an average honest evaluator would give, i.e. the
    qualities (the simulated leniencies are drawn around 0). With ``FIDELITY_TRUTH=shifted``,
    as measured before 2026-12-07: shifted by the honest evaluators' evidence-weighted
    leniency at each task type (colluders and Sybils no part of it), the scale the fit
    then anchored to, whose own error the intervals did not carry."""
    scored: list[Scored] = [
        (e, s.task_type, fleet.leniency.get(e, 0.0), fleet.noise.get(e, 0.5))
        for s in sims
        for e, a, _, _ in s.scores
        if e in fleet.leniency and e not in fleet.colluders
    ]
    shift = shifted(scored, types)
    if os.environ.get("FIDELITY_TRUTH") != "shifted":
        shift = dict.fromkeys(types, 0.0)
    truth: dict[str | None, dict[str, float]] = {
        t: {a: fleet.quality[a][t] + shift[t] for a in fleet.agents} for t in types
    }
    truth[None] = overall_truth({t: truth[t] for t in types}, fleet.agents)
    return truth


def _scores(report: ExternalDeliberation) -> dict[str, float]:
    out: dict[str, list[float]] = {}
    for reported in report.rounds:
        for agent, result in reported.agents.items():
            if result.aggregated_score is not None:
                out.setdefault(agent, []).append(result.aggregated_score)
    return {a: statistics.fmean(v) for a, v in out.items()}


async def _run(scenario: Scenario, seed: int, rules: SkillRules,
               checkpoints: tuple[int, ...]) -> dict[int, dict[str, float]]:  # fmt: skip
    rng = random.Random(seed)
    fleet = make_fleet(scenario, rng)
    sims = stream(scenario, fleet, max(checkpoints), rng)
    store = MemoryStore()
    clock = FixedClock()
    skill = SkillService(store, rules, clock=clock)
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
        scores = _scores(report)
        peers[0].rate(sim.task_type, scores)
        peers[1].add(sim.task_type, scores)
        clock.advance(60.0)
        if sim.index + 1 in checkpoints:
            await skill.fit()
            found[sim.index + 1] = await _checkpoint(
                fleet, sims[: sim.index + 1], store, skill, peers
            )
    return found


async def _checkpoint(
    fleet: Fleet, sims: list[SimDeliberation], store: MemoryStore, skill: SkillService,
    peers: tuple[OpenSkill, BradleyTerry],
) -> dict[str, float]:  # fmt: skip
    states = {s.agent_id: s for s in await store.list_skills()}
    fleet_skill = await store.get_fleet_skill()
    types = sorted(fleet_skill.levels) or list(TASK_TYPES)
    truth = truth_of(fleet, sims, types)
    out = measure(states, fleet_skill, fleet.agents, truth, skill.now(), skill.rules)
    stats = await store.list_stats()
    profiles = {p.id: p for p in await store.list_profiles()}
    for scope, real in truth.items():
        key = "overall" if scope is None else "type"
        share = 1.0 if scope is None else 1.0 / len(types)
        estimates = {
            "skill": {a: out[f"est:{scope}:{a}"] for a in real},
            "rank": {a: float(stats[a].value.rank) if a in stats else 0.0 for a in real},
            "openskill": peers[0].mu(scope),
            "bradley_terry": peers[1].strengths(scope, fleet.agents),
        }
        if scope is None:
            estimates["xp"] = {a: float(profiles[a].xp) if a in profiles else 0.0 for a in real}
            estimates["avg_score"] = {a: stats[a].value.avg_score if a in stats else 0.0
                                      for a in real}  # fmt: skip
        else:
            specs = {a: p.specializations.get(scope) for a, p in profiles.items()}
            estimates["xp"] = {a: float(s.xp) if (s := specs.get(a)) else 0.0 for a in real}
            estimates["avg_score"] = {a: s.avg_score if (s := specs.get(a)) else 0.0 for a in real}
        for method, estimate in estimates.items():
            name = f"{method}/{key}"
            out[name] = out.get(name, 0.0) + share * kendall_tau(estimate, real)
    return out


def peer_run(
    scenario: Scenario, seed: int, rules: SkillRules, checkpoints: tuple[int, ...] = CHECKPOINTS
) -> dict[int, dict[str, float]]:
    """One seeded fleet through ``max(checkpoints)`` reported deliberations."""
    return asyncio.run(_run(scenario, seed, rules, checkpoints))


def sybil_moves(seed: int, rules: SkillRules) -> float:
    """How far (in its sd) Sybils move their target overall: 100 plain deliberations of
    10 agents, then 40 with the target and two Sybils each, fitted with and without the
    Sybils' scores."""
    scenario = Scenario("sybils", agents=10, noise=0.7, rounds=1, sybils=True)
    rng = random.Random(seed)
    fleet = make_fleet(scenario, rng)
    plain = stream(Scenario("plain", agents=10, noise=0.7, rounds=1), fleet, 100, rng)
    attacked = [
        SimDeliberation(s.index + 100, s.task_type, s.agents, s.scores)
        for s in stream(scenario, fleet, 40, rng)
    ]
    attack = sim_evidence(attacked)
    clean = [
        e.model_copy(update={"evaluations": tuple(
            v for v in e.evaluations if not v.evaluator.startswith("sybil"))})
        for e in attack
        if isinstance(e, DeliberationEvidence)
    ]  # fmt: skip
    with_sybils = fitted([*sim_evidence(plain), *attack], rules)
    without = fitted([*sim_evidence(plain), *clean], rules)
    now = 2_000_000.0
    before = skill_view(without[0][SYBIL_TARGET], without[1], None, now, rules)
    after = skill_view(with_sybils[0][SYBIL_TARGET], with_sybils[1], None, now, rules)
    return (after.skill - before.skill) / before.sd
