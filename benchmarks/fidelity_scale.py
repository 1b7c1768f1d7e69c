"""The "scale" worlds of ``bench_fidelity``: the truth is the score honest judges would give.

A board reads on its sources' scale (docs/skill.md, "The scale"), and that scale is closed:
a judge's best is 10, its worst 0. The truth here is what an honest average of the scores
reads: at each (agent, task type), each judge's expected score (its leniency, its noise,
the rounding of a rubric and the scale's ends included), averaged over the judges who
score there, each as often as the others; overall, its mean over the fleet's task types
(as the board's overall is). Where a judge's noise never reaches an end of the scale this
is the noiseless score clipped to the scale; each world prints how far apart the two come.

- **honest peers**: 6 agents of quality 9, 8.5, 7, 6, 5 and 4, all six in each of 30
  one-round deliberations at one task type, each proposal scored by the 5 peers, noise 0.3;
- **honest peers, 12 agents**: qualities 3.5 to 9 evenly spaced, each task type's
  around it (sd 0.5, within 1-9.5), 3 task types, 90 deliberations (30 of each type) of 6
  agents drawn at random, noise 0.3;
- **lenient and harsh judges**: 8 agents of quality 9.5 down to 2 (each task type's
  around it, sd 0.3), 4 judges of leniency -1.5, -0.5, +0.5 and +1.5 (mean 0) and noise
  0.5, each scoring every agent at each of 3 task types 5 times: the lenient judges' scores
  of the best agents stop at 10;
- **a closed 1-10 rubric**: 8 agents near its top (6.6 to 10.6 on the rubric, each task
  type's around it, sd 0.3), one judge of noise 1.0 whose scores are rounded to integers,
  clipped to 1-10 and mapped to 0-10 as the import maps ``1-10`` (1 is 0, 10 is 10): about
  40% of them are 10s; 60 judgments of each agent at each of 3 task types.

Every seed is read twice (``read``): right after the evidence is applied through
``SkillService.observe_many`` (the filter steps the service takes as evidence arrives,
before any fit), then after the fit.
"""

from __future__ import annotations

import asyncio
import math
import random
import statistics
from collections.abc import Callable
from dataclasses import dataclass

from agentladder.domain.scales import to_ten
from agentladder.domain.skill.evidence import (
    DeliberationEvidence,
    Evaluation,
    Evidence,
    ScoreEvidence,
)
from agentladder.domain.skill.rules import SkillRules
from agentladder.services.clock import FixedClock
from agentladder.services.skill.service import SkillService
from agentladder.store.memory import MemoryStore
from benchmarks.fidelity_fleet import TASK_TYPES
from benchmarks.fidelity_measures import measure

__all__ = ["WORLDS", "ScaleWorld", "clipped_mean", "read", "rubric_mean"]

START = 1_000_000.0
Truth = dict[str | None, dict[str, float]]
"""Per task type (and None: overall), each agent's true score."""


@dataclass(frozen=True)
class ScaleWorld:
    """The agents, the evidence, the truth (the judges' expected scores) and the noiseless
    scores clipped to the scale beside it, and the share of the scores at 10."""

    agents: list[str]
    evidence: list[Evidence]
    truth: Truth
    noiseless: Truth
    tens: float


def _phi(x: float) -> float:
    return math.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def _cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def clipped_mean(mean: float, sd: float, low: float = 0.0, high: float = 10.0) -> float:
    """E[min(max(X, low), high)] for X ~ N(mean, sd²): a judge's expected score on a
    closed scale."""
    a, b = (low - mean) / sd, (high - mean) / sd
    inside = mean * (_cdf(b) - _cdf(a)) + sd * (_phi(a) - _phi(b))
    return low * _cdf(a) + high * (1.0 - _cdf(b)) + inside


def rubric_mean(mean: float, sd: float) -> float:
    """The expected 0-10 score of a 1-10 rubric judge whose score is N(mean, sd²) rounded
    to an integer and clipped to 1-10, mapped as the import maps ``1-10``."""
    total = 0.0
    for k in range(1, 11):
        upper = 1.0 if k == 10 else _cdf((k + 0.5 - mean) / sd)
        lower = 0.0 if k == 1 else _cdf((k - 0.5 - mean) / sd)
        total += (upper - lower) * to_ten(float(k), "1-10")
    return total


def _rubric_score(value: float) -> float:
    return to_ten(float(min(10, max(1, math.floor(value + 0.5)))), "1-10")


def _overall(per_type: Truth) -> Truth:
    """The truth per task type, with overall (None): the mean over the task types."""
    agents = next(iter(per_type.values()))
    overall = {a: statistics.fmean(per_type[t][a] for t in per_type) for a in agents}
    return {**per_type, None: overall}


def _each(quality: dict[str, dict[str, float]], value: Callable[[float], float]) -> Truth:
    """``value`` of each agent's quality at each task type, and overall."""
    return _overall({t: {a: value(q) for a, q in v.items()} for t, v in quality.items()})


def _names(count: int) -> list[str]:
    return [f"agent_{i:02d}" for i in range(count)]


def _around(rng: random.Random, base: dict[str, float], types: tuple[str, ...], sd: float,
            low: float, high: float) -> dict[str, dict[str, float]]:  # fmt: skip
    """Each task type's quality around each agent's base (sd), within [low, high]."""
    return {t: {a: min(high, max(low, q + rng.gauss(0.0, sd))) for a, q in base.items()}
            for t in types}  # fmt: skip


def _peers(
    rng: random.Random, quality: dict[str, dict[str, float]], count: int, size: int, noise: float
) -> ScaleWorld:
    """``count`` one-round deliberations, cycling through the task types, of ``size``
    agents drawn at random (all of them when ``size`` is their number), each proposal
    scored by every peer: quality + N(0, noise²), clipped to 0-10."""
    types = tuple(quality)
    agents = sorted(next(iter(quality.values())))
    evidence: list[Evidence] = []
    given = tens = 0
    for d in range(count):
        task_type = types[d % len(types)]
        chosen = tuple(sorted(rng.sample(agents, size)))
        evaluations = []
        for evaluator in chosen:
            for author in chosen:
                if author != evaluator:
                    value = quality[task_type][author] + rng.gauss(0.0, noise)
                    score = round(min(10.0, max(0.0, value)), 3)
                    evaluations.append(Evaluation(evaluator=evaluator, author=author, round=1,
                                                  score=score))  # fmt: skip
                    given += 1
                    tens += score == 10.0
        evidence.append(DeliberationEvidence(
            key=f"deliberation:scale-{d}", at=START + 60.0 * d, task_type=task_type,
            agents=chosen, evaluations=tuple(evaluations),
        ))  # fmt: skip
    truth = _each(quality, lambda q: clipped_mean(q, noise))
    noiseless = _each(quality, lambda q: min(10.0, max(0.0, q)))
    return ScaleWorld(agents, evidence, truth, noiseless, tens / given)


def honest_peers(seed: int) -> ScaleWorld:
    """6 agents of quality 9 to 4, all in each of 30 deliberations, peers' noise 0.3."""
    base = dict(zip(_names(6), (9.0, 8.5, 7.0, 6.0, 5.0, 4.0), strict=True))
    return _peers(random.Random(seed), {TASK_TYPES[0]: base}, 30, 6, 0.3)


def peer_fleet(seed: int) -> ScaleWorld:
    """12 agents of quality 3.5 to 9, 3 task types, 90 deliberations of 6, noise 0.3."""
    rng = random.Random(seed)
    base = {a: 3.5 + 0.5 * i for i, a in enumerate(_names(12))}
    return _peers(rng, _around(rng, base, TASK_TYPES, 0.5, 1.0, 9.5), 90, 6, 0.3)


def _judged(
    rng: random.Random,
    judges: dict[str, float],
    noise: float,
    quality: dict[str, dict[str, float]],
    rounds: int,
    score: Callable[[float], float],
) -> tuple[list[Evidence], float]:
    """Every judge (name: leniency) scoring every agent at every task type ``rounds``
    times, in a random order: ``score(quality + leniency + N(0, noise²))``; the evidence
    and the share of the scores at 10."""
    work = [(j, t, a) for _ in range(rounds) for j in judges for t in quality for a in quality[t]]
    rng.shuffle(work)
    evidence: list[Evidence] = []
    tens = 0
    for k, (judge, task_type, agent) in enumerate(work):
        given = score(quality[task_type][agent] + judges[judge] + rng.gauss(0.0, noise))
        tens += given == 10.0
        evidence.append(ScoreEvidence(key=f"judgment:{agent}:scale-{k}", at=START + k,
                                      agent_id=agent, task_type=task_type, score=given,
                                      judge=judge))  # fmt: skip
    return evidence, tens / len(work)


def _clipped(value: float) -> float:
    return round(min(10.0, max(0.0, value)), 2)


MIXED = {"harsh-1.5": -1.5, "harsh-0.5": -0.5, "lenient+0.5": 0.5, "lenient+1.5": 1.5}
"""The lenient and harsh judges: name, leniency (their mean is 0)."""
MIXED_NOISE = 0.5


def mixed_judges(seed: int) -> ScaleWorld:
    """8 agents of quality 9.5 to 2, 4 judges of leniency -1.5 to +1.5 (mean 0) and noise
    0.5, each scoring every agent at each of 3 task types 5 times."""
    rng = random.Random(seed)
    base = dict(zip(_names(8), (9.5, 9.0, 8.0, 7.0, 6.0, 5.0, 3.5, 2.0), strict=True))
    quality = _around(rng, base, TASK_TYPES, 0.3, 0.0, 10.0)
    evidence, tens = _judged(rng, MIXED, MIXED_NOISE, quality, 5, _clipped)
    truth = _each(quality, lambda q: statistics.fmean(
        clipped_mean(q + lean, MIXED_NOISE) for lean in MIXED.values()))  # fmt: skip
    noiseless = _each(quality, lambda q: statistics.fmean(
        min(10.0, max(0.0, q + lean)) for lean in MIXED.values()))  # fmt: skip
    return ScaleWorld(sorted(base), evidence, truth, noiseless, tens)


RUBRIC_NOISE = 1.0


def rubric(seed: int) -> ScaleWorld:
    """8 agents near the top of a 1-10 rubric, one judge of noise 1.0 whose scores are
    rounded, clipped to 1-10 and mapped to 0-10; 60 judgments of each at each task type."""
    rng = random.Random(seed)
    base = dict(zip(_names(8), (10.6, 10.2, 9.8, 9.4, 9.0, 8.4, 7.6, 6.6), strict=True))
    quality = _around(rng, base, TASK_TYPES, 0.3, 1.0, 11.0)
    evidence, tens = _judged(rng, {"rubric": 0.0}, RUBRIC_NOISE, quality, 60, _rubric_score)
    truth = _each(quality, lambda q: rubric_mean(q, RUBRIC_NOISE))
    noiseless = _each(quality, lambda q: to_ten(min(10.0, max(1.0, q)), "1-10"))
    return ScaleWorld(sorted(base), evidence, truth, noiseless, tens)


WORLDS: dict[str, Callable[[int], ScaleWorld]] = {
    "honest peers: 6 agents, 30 deliberations": honest_peers,
    "honest peers: 12 agents, 3 types, 90 deliberations of 6": peer_fleet,
    "lenient and harsh judges (-1.5 to +1.5, mean 0)": mixed_judges,
    "a closed 1-10 rubric, one judge": rubric,
}


async def _read(world: ScaleWorld, rules: SkillRules) -> dict[str, dict[str, float]]:
    store = MemoryStore()
    skill = SkillService(store, rules, clock=FixedClock())
    await skill.observe_many(world.evidence)
    now = max(e.at for e in world.evidence)
    found: dict[str, dict[str, float]] = {}
    for phase in ("live", "fit"):
        if phase == "fit":
            await skill.fit()
        states = {s.agent_id: s for s in await store.list_skills()}
        fleet = await store.get_fleet_skill()
        found[phase] = measure(states, fleet, world.agents, world.truth, now, rules)
    return found


def read(world: ScaleWorld, rules: SkillRules) -> dict[str, dict[str, float]]:
    """The estimates against the truth (``fidelity_measures.measure``: coverage overall and
    per task type, ``est:<scope>:<agent>``), right after the evidence (``live``: no fit)
    and after the fit (``fit``)."""
    return asyncio.run(_read(world, rules))
