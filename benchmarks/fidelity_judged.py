"""The worlds of ``bench_fidelity`` beside the peer fleets: judgments by judges of their own
noise and leniency, agents seen at one of several task types, a deliberation after a
thousand judgments, aggregated-only reports, and the same evidence in other orders.

Each world feeds the skill model through ``SkillService`` (the service the Oracle and the
orchestrator call) on the in-memory store and fits it, so what is measured is what the
API serves.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass

from agentladder.domain.skill.evidence import (
    DeliberationEvidence,
    Evaluation,
    Evidence,
    ReportedScore,
    ScoreEvidence,
)
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.state import AgentSkill, FleetSkill
from agentladder.services.clock import FixedClock
from agentladder.services.skill.service import SkillService
from agentladder.store.memory import MemoryStore
from benchmarks.fidelity_fleet import TASK_TYPES
from benchmarks.fidelity_measures import Scored

__all__ = ["Judge", "JudgedWorld", "fitted", "judged_world", "peer_deliberations"]

START = 1_000_000.0


@dataclass(frozen=True)
class Judge:
    """A judge: its noise, its leniency, and an offset per task type (sd)."""

    name: str
    noise: float
    leniency: float = 0.0
    per_type: float = 0.0
    share: float = 1.0


@dataclass
class JudgedWorld:
    """Agents' true quality, the evidence, and every score's (source, type, bias, noise)."""

    agents: list[str]
    quality: dict[str, dict[str, float]]
    evidence: list[Evidence]
    scored: list[Scored]


def _qualities(
    rng: random.Random, count: int, types: tuple[str, ...]
) -> dict[str, dict[str, float]]:
    out = {}
    for i in range(count):
        base = rng.uniform(3.0, 8.5)
        out[f"agent_{i:02d}"] = {t: min(9.5, max(1.0, base + rng.gauss(0.0, 0.7))) for t in types}
    return out


def judged_world(
    seed: int, agents: int, count: int, judges: list[Judge], *, one_type_each: bool = False
) -> JudgedWorld:
    """``count`` judgments of random (agent, task type), each by a judge drawn by share;
    with ``one_type_each`` every agent is judged at one task type only (the fleet at all)."""
    rng = random.Random(seed)
    quality = _qualities(rng, agents, TASK_TYPES)
    names = sorted(quality)
    offsets = {(j.name, t): rng.gauss(0.0, j.per_type) for j in judges for t in TASK_TYPES}
    only = {a: TASK_TYPES[i % len(TASK_TYPES)] for i, a in enumerate(names)}
    evidence: list[Evidence] = []
    scored: list[Scored] = []
    for k in range(count):
        agent = rng.choice(names)
        task_type = only[agent] if one_type_each else rng.choice(TASK_TYPES)
        judge = rng.choices(judges, weights=[j.share for j in judges])[0]
        bias = judge.leniency + offsets[(judge.name, task_type)]
        value = quality[agent][task_type] + bias + rng.gauss(0.0, judge.noise)
        evidence.append(ScoreEvidence(
            key=f"judgment:{agent}:{k}", at=START + k, agent_id=agent, task_type=task_type,
            score=round(min(10.0, max(0.0, value)), 2), judge=judge.name,
        ))  # fmt: skip
        scored.append((judge.name, task_type, bias, judge.noise))
    return JudgedWorld(names, quality, evidence, scored)


def peer_deliberations(
    world: JudgedWorld, count: int, seed: int, at: float, agents: tuple[str, ...] | None = None
) -> list[Evidence]:
    """``count`` one-round deliberations among 2 agents (or ``agents``) at the first task
    type, peers scoring honestly with noise 0.5."""
    rng = random.Random(seed)
    out: list[Evidence] = []
    for d in range(count):
        chosen = agents or tuple(sorted(rng.sample(world.agents, 2)))
        task_type = TASK_TYPES[0]
        out.append(DeliberationEvidence(
            key=f"deliberation:extra-{seed}-{d}", at=at + d, task_type=task_type, agents=chosen,
            evaluations=tuple(
                Evaluation(evaluator=e, author=a, round=1, score=round(min(10.0, max(
                    0.0, world.quality[a][task_type] + rng.gauss(0.0, 0.5))), 2))
                for e in chosen for a in chosen if a != e
            ),
        ))  # fmt: skip
    return out


def aggregated_reports(world: JudgedWorld, target: str, count: int, at: float) -> list[Evidence]:
    """Reports carrying only aggregated scores: the target 10, the others their quality."""
    return [
        DeliberationEvidence(
            key=f"deliberation:aggregated-{i}",
            at=at + i,
            task_type=TASK_TYPES[0],
            agents=tuple(world.agents),
            aggregated=tuple(
                ReportedScore(
                    author=a,
                    round=1,
                    score=10.0 if a == target else round(world.quality[a][TASK_TYPES[0]], 2),
                )
                for a in world.agents
            ),
        )
        for i in range(count)
    ]


def new_judge_scores(world: JudgedWorld, target: str, count: int, at: float) -> list[Evidence]:
    """The same, as judgments of a judge nobody has seen: the target 10, the others their
    quality."""
    out: list[Evidence] = []
    for i in range(count):
        for a in world.agents:
            score = 10.0 if a == target else round(world.quality[a][TASK_TYPES[0]], 2)
            key = f"judgment:{a}:new-{i}"
            out.append(ScoreEvidence(key=key, at=at + i, agent_id=a, task_type=TASK_TYPES[0],
                                     score=score, judge="new"))  # fmt: skip
    return out


async def _fitted(
    evidence: list[Evidence], rules: SkillRules
) -> tuple[dict[str, AgentSkill], FleetSkill]:
    store = MemoryStore()
    skill = SkillService(store, rules, clock=FixedClock())
    await skill.observe_many(evidence)
    await skill.fit()
    return {s.agent_id: s for s in await store.list_skills()}, await store.get_fleet_skill()


def fitted(evidence: list[Evidence], rules: SkillRules) -> tuple[dict[str, AgentSkill], FleetSkill]:
    """The states after the evidence is applied (in the order given) and fitted."""
    return asyncio.run(_fitted(evidence, rules))
