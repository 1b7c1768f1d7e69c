"""Routing: who gets the work, and what it delivers, against the obvious policies and an
oracle that knows the true qualities.

A seeded world (``routing_world``): 30 agents with hidden quality per task type, prices
and latencies; 24 from the start, six join at tasks 300-1300 (the one joining at 700 is
better than every other at every type), and the best initial agent loses 3 points at
task 1000. A stream of 2,000 tasks of three types; each task goes to 3 agents, who
deliberate one round (each proposes and scores the other two; scores are quality plus
the task's difficulty, the evaluator's leniency and noise). Every policy sees the same
stream, side by side in one run; those that learn have their own store, fed each
deliberation through ``Orchestrator.report`` with its peer scores (ranking, the Oracle's
XP, the skill evidence: the service's path), and agentladder's strategies choose through
``RoutingService.route`` (the service, on that store).

Policies: random, cheapest, highest XP (at the task type), highest rank, best avg_score
(at the task type), agentladder best, explore and cheapest_above (floor 6.5), the oracle
(the 3 truly best present) and the oracle's cheapest above the floor (the 3 cheapest
truly above it). Quality delivered: the mean true quality of a task's 3 agents (each
does the work and is paid); also the true quality of the deliberation's result (the best
peer-scored proposal). Regret: the oracle's quality minus the policy's, summed.

Targets: explore's cumulative quality at least 95% of the oracle's; cheapest_above meets
its floor (all 3 agents truly at or above it) on at least 95% of tasks at a cost within
10% of the oracle's cheapest above the floor; the agent joining at 700, better than every
other, among the picks of at least half the tasks from the 50th after it joins; the
selection (``route`` on its table) p99 at most 2 ms with 10,000 agents.

The learners' skill model is fitted every ``ROUTING_FIT_EVERY`` tasks (default 20; 0:
never, the filter steps between fits alone), as ``serve`` fits in the background
(``skill.fit_interval_s``, 30 s: every 20 tasks is a task every 1.5 s).

Run: ``.venv/bin/python -m benchmarks routing``; ``ROUTING_SEEDS=N`` (default 5),
``ROUTING_SKILL_RULES=<JSON of skill rule overrides>`` for experiments.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import random
import statistics
import tempfile
import time
from dataclasses import dataclass, field

from agentladder.domain.external import ExternalDeliberation
from agentladder.domain.levels import Level
from agentladder.domain.routing import Candidate, RouteSpec, RoutingRules, Strategy, route
from agentladder.domain.routing.select import routing_table
from agentladder.domain.scoring import aggregate_peer_scores
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.services.agents.registry import Registry
from agentladder.services.clock import FixedClock
from agentladder.services.deliberations.orchestrator import Orchestrator
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.service import Oracle
from agentladder.services.routing.service import RoutingService
from agentladder.services.skill.service import SkillService
from agentladder.store.memory import MemoryStore
from agentladder.store.url import open_store
from benchmarks.common import percentile
from benchmarks.routing_world import STAR_JOINS, TASKS, World, make_world

COUNT = 3
FLOOR = 6.5
MARGIN = 0.35
FIT_EVERY = int(os.environ.get("ROUTING_FIT_EVERY", "20"))
STRATEGIES = ("best", "explore", "cheapest_above")
"""How far above the floor an agent must truly be for a 95% lower bound to clear it in
this world: every estimate keeps an sd of at least about 0.17 (the uncertainty of the
scale's level and of the honest evaluators' mean leniency, shared by all agents), and
1.96 x 0.175 = 0.34. The oracle's cheapest above ``FLOOR + MARGIN`` is the cheapest
choice a lower bound could ever certify: the cost reference beside the oracle's own."""
LEARNING = ("highest_xp", "highest_rank", "best_avg_score", "best", "explore", "cheapest_above")
ORACLES = ("oracle", "oracle_cheapest_above", "oracle_cheapest_certifiable")
POLICIES = ("random", "cheapest", *LEARNING, *ORACLES)


@dataclass
class Tally:
    """What one policy delivered over the stream."""

    quality: list[float] = field(default_factory=list)
    result: list[float] = field(default_factory=list)
    cost: list[float] = field(default_factory=list)
    floor_met: list[bool] = field(default_factory=list)
    result_floor: list[bool] = field(default_factory=list)
    star: list[bool] = field(default_factory=list)  # from the 50th task after it joins
    explored: int = 0
    picks: int = 0


class Learner:
    """One policy's own services on its own store."""

    def __init__(self, world: World, *, fits: bool = False) -> None:
        self.world = world
        self.fits = fits  # its skill model is fitted every FIT_EVERY tasks (routing reads it)
        self.store = MemoryStore()
        self.clock = FixedClock()
        overrides = json.loads(os.environ.get("ROUTING_SKILL_RULES", "{}"))
        self.skill = SkillService(
            self.store, SkillRules.model_validate(overrides), clock=self.clock
        )
        self.oracle = Oracle(self.store, clock=self.clock, skill=self.skill)
        self.registry = Registry(
            self.store, clock=self.clock, skill=self.skill, heartbeat_interval_s=1e9
        )
        self.orchestrator = Orchestrator(
            store=self.store, registry=self.registry, oracle=self.oracle, providers={},
            clock=self.clock,
        )  # fmt: skip
        self.routing = RoutingService(store=self.store, registry=self.registry, skill=self.skill)
        self.joined: set[str] = set()

    async def join(self, index: int) -> None:
        """Heartbeat the agents joining by task ``index``."""
        for agent in self.world.present(index):
            if agent.name not in self.joined:
                self.joined.add(agent.name)
                await self.registry.heartbeat({
                    "name": agent.name, "input_price_per_mtok": agent.input_price,
                    "output_price_per_mtok": agent.output_price,
                })  # fmt: skip

    async def report(self, index: int, task_type: str, picks: list[str]) -> None:
        """The deliberation among ``picks``, reported with its peer scores."""
        scores = self.world.scores(index, task_type, picks)
        agents = {
            author: {
                "aggregated_score": aggregate_peer_scores(author, given),
                "evaluations": given,
                "latency_ms": self.world.by_name[author].latency_ms,
            }
            for author, given in scores.items()
        }
        await self.orchestrator.report(
            ExternalDeliberation.model_validate(
                {"deliberation_id": f"t-{index}", "task_type": task_type,
                 "rounds": [{"agents": agents}]}
            )
        )  # fmt: skip
        await self.orchestrator.settle()
        self.clock.advance(60.0)
        if self.fits and FIT_EVERY and index % FIT_EVERY == FIT_EVERY - 1:
            await self.skill.fit(force=True)


def _top(values: dict[str, float], rng: random.Random) -> list[str]:
    """The COUNT highest, ties drawn."""
    names = list(values)
    rng.shuffle(names)
    return sorted(names, key=lambda a: -values[a])[:COUNT]


async def _baseline(learner: Learner, policy: str, task_type: str, rng: random.Random) -> list[str]:
    names = sorted(learner.joined)
    if policy == "highest_rank":
        stats = await learner.store.get_many_stats(names)
        return _top({a: float(stats[a].value.rank) if a in stats else 0.0 for a in names}, rng)
    profiles = await learner.store.get_many_profiles(names)
    values = {}
    for a in names:
        spec = profiles[a].value.specializations.get(task_type) if a in profiles else None
        if spec is None:
            values[a] = 0.0
        else:
            values[a] = float(spec.xp) if policy == "highest_xp" else spec.avg_score
    return _top(values, rng)


async def _agentladder(
    learner: Learner, strategy: str, task_type: str, index: int, seed: int
) -> tuple[list[str], int]:
    spec = RouteSpec(
        count=COUNT, task_type=task_type, strategy=Strategy(strategy),
        quality_floor=FLOOR if strategy == "cheapest_above" else None,
    )  # fmt: skip
    chosen = await learner.routing.route(spec, seed=seed * 100_003 + index)
    explored = sum(p.reason is Strategy.EXPLORE for p in chosen.agents)
    return [p.agent_id for p in chosen.agents], explored


def _cheapest(truth: dict[str, float], cost: dict[str, float], floor: float) -> list[str]:
    """The COUNT cheapest truly at or above ``floor``."""
    return sorted((a for a in truth if truth[a] >= floor), key=lambda a: (cost[a], a))[:COUNT]


async def run(seed: int) -> dict[str, Tally]:
    """Every policy through one seeded stream."""
    world = make_world(seed)
    learners = {policy: Learner(world, fits=policy in STRATEGIES) for policy in LEARNING}
    tallies = {policy: Tally() for policy in POLICIES}
    rng = random.Random(seed + 1)
    for index, task_type in enumerate(world.tasks):
        present = world.present(index)
        truth = {a.name: a.true_quality(task_type, index) for a in present}
        cost = {a.name: a.cost for a in present}
        chosen: dict[str, tuple[list[str], int]] = {
            "random": (rng.sample(sorted(truth), COUNT), 0),
            "cheapest": (sorted(truth, key=lambda a: (cost[a], a))[:COUNT], 0),
            "oracle": (sorted(truth, key=lambda a: (-truth[a], a))[:COUNT], 0),
            "oracle_cheapest_above": (_cheapest(truth, cost, FLOOR), 0),
            "oracle_cheapest_certifiable": (_cheapest(truth, cost, FLOOR + MARGIN), 0),
        }
        for policy, learner in learners.items():
            await learner.join(index)
            if policy in STRATEGIES:
                chosen[policy] = await _agentladder(learner, policy, task_type, index, seed)
            else:
                chosen[policy] = (await _baseline(learner, policy, task_type, rng), 0)
            await learner.report(index, task_type, chosen[policy][0])
        for policy, (picks, explored) in chosen.items():
            tally = tallies[policy]
            tally.quality.append(statistics.fmean(truth[a] for a in picks))
            scores = world.scores(index, task_type, picks)
            aggregated = {a: aggregate_peer_scores(a, g) or 0.0 for a, g in scores.items()}
            result = truth[min(picks, key=lambda a: (-aggregated[a], a))]
            tally.result.append(result)
            tally.result_floor.append(result >= FLOOR)
            tally.cost.append(sum(cost[a] for a in picks))
            tally.floor_met.append(all(truth[a] >= FLOOR for a in picks))
            if index >= STAR_JOINS + 50:
                tally.star.append(world.star in picks)
            tally.explored += explored
            tally.picks += len(picks)
    return tallies


def summary(tallies: dict[str, Tally]) -> dict[str, dict[str, float]]:
    """Per policy: mean quality, mean result quality, total cost, regret, floor share,
    the star's share, the explore share."""
    oracle = sum(tallies["oracle"].quality)
    out = {}
    for policy, t in tallies.items():
        out[policy] = {
            "quality": statistics.fmean(t.quality),
            "result": statistics.fmean(t.result),
            "cost": sum(t.cost),
            "regret": oracle - sum(t.quality),
            "of_oracle": sum(t.quality) / oracle,
            "floor_met": statistics.fmean(t.floor_met),
            "result_floor": statistics.fmean(t.result_floor),
            "star": statistics.fmean(t.star) if t.star else 0.0,
            "explore_share": t.explored / t.picks,
        }
    return out


def selection_p99(agents: int = 10_000, calls: int = 3000) -> dict[str, tuple[float, float]]:
    """p50 and p99 (ms) of ``route`` on a table of ``agents`` synthetic agents: 90% with
    evidence (sd 0.2-0.8), 10% new (sd 2.69), 5% offline, 2% down, half tagged.
    Wall clock and the thread's CPU time (on a shared machine a call descheduled for a
    time slice takes milliseconds more on the wall clock)."""
    rng = random.Random(11)
    candidates = []
    for i in range(agents):
        new = rng.random() < 0.1
        skill = 5.0 if new else rng.uniform(2.0, 9.0)
        sd = 2.69 if new else rng.uniform(0.2, 0.8)
        candidates.append(
            Candidate(
                agent_id=f"a{i:05d}",
                skill=skill,
                sd=sd,
                low=max(0.0, skill - 1.96 * sd),
                observations=0 if new else rng.randint(5, 200),
                cost=math.exp(rng.uniform(math.log(0.001), math.log(0.1))),
                latencies_ms=tuple(rng.uniform(200, 3000) for _ in range(64)),
                online=rng.random() > 0.05,
                down="3 failed calls in a row" if rng.random() < 0.02 else None,
                level=rng.choice(list(Level)),
                tags=frozenset({"code"} if rng.random() < 0.5 else ()),
            )
        )
    start = time.perf_counter()
    table = routing_table(candidates)
    build_ms = (time.perf_counter() - start) * 1000
    out = {"table build (once per snapshot)": (build_ms, build_ms)}
    specs = {
        "best": RouteSpec(count=COUNT, tags=("code",)),
        "explore": RouteSpec(count=COUNT, tags=("code",), strategy=Strategy.EXPLORE),
        "cheapest_above": RouteSpec(
            count=COUNT, tags=("code",), strategy=Strategy.CHEAPEST_ABOVE, quality_floor=FLOOR
        ),
    }
    rules = RoutingRules()
    for name, spec in specs.items():
        wall, cpu = [], []
        for seed in range(calls):
            begin, spent = time.perf_counter(), time.thread_time()
            route(table, spec, now=1e9, seed=seed, rules=rules)
            cpu.append((time.thread_time() - spent) * 1000)
            wall.append((time.perf_counter() - begin) * 1000)
        out[f"{name} (wall clock)"] = (statistics.median(wall), percentile(wall, 99))
        out[f"{name} (thread CPU time)"] = (statistics.median(cpu), percentile(cpu, 99))
    return out


async def service_route_ms(
    agents: int = 10_000, calls: int = 20, *, evidence: bool = True, sqlite: bool = False
) -> tuple[float, float]:
    """p50 and max (ms) of ``RoutingService.route`` with ``agents`` registered agents on
    the memory store, or a SQLite file (the reads, the skill views, the table, the
    choice). ``evidence``: each agent has one judgment at the task type (a skill state
    and an Oracle profile) and stats with a full latency window, as in a fleet at work;
    else registrations only."""
    folder = tempfile.TemporaryDirectory()
    store = await open_store(f"sqlite:///{folder.name}/route.db") if sqlite else MemoryStore()
    clock = FixedClock()
    skill = SkillService(store, clock=clock)
    registry = Registry(store, clock=clock, heartbeat_interval_s=1e9)
    oracle = Oracle(store, clock=clock, skill=skill)
    rng = random.Random(5)
    names = [f"a{i:05d}" for i in range(agents)]
    for i, name in enumerate(names):
        await registry.heartbeat({"name": name, "input_price_per_mtok": i % 13})
    if evidence:
        for i, name in enumerate(names):
            await oracle.submit_for_judgment(
                JudgmentRequest(agent_id=name, contract_id=f"c{i}", task_type="code_review",
                                score=round(rng.uniform(3.0, 9.0), 2))
            )  # fmt: skip
        window = [tuple(rng.uniform(100, 900) for _ in range(64)) for _ in range(97)]
        await store.commit_stats(
            {name: (AgentPerformanceStats(rank=i % 5, recent_latencies_ms=window[i % 97]), 0)
             for i, name in enumerate(names)},
            marker="bench",
        )  # fmt: skip
    service = RoutingService(store=store, registry=registry, skill=skill)
    times = []
    try:
        for seed in range(calls):
            begin = time.perf_counter()
            await service.route(RouteSpec(count=COUNT, task_type="code_review"), seed=seed)
            times.append((time.perf_counter() - begin) * 1000)
    finally:
        await store.close()
        folder.cleanup()
    return statistics.median(times), max(times)


def _timed(seed: int) -> dict[str, Tally]:
    begin = time.perf_counter()
    found = asyncio.run(run(seed))
    print(f"  seed {seed}: {time.perf_counter() - begin:.0f} s")
    return found


def main() -> None:
    """Every policy over ROUTING_SEEDS seeded streams (medians), then the selection's cost
    (ROUTING_SEEDS=0: the timings alone)."""
    seeds = list(range(int(os.environ.get("ROUTING_SEEDS", "5"))))
    if seeds:
        quality(seeds)
    timings()


def quality(seeds: list[int]) -> None:
    """The policies side by side over the seeded streams, and the quality targets."""
    runs = [summary(_timed(seed)) for seed in seeds]
    print(f"{TASKS} tasks, {COUNT} agents each, floor {FLOOR}, seeds {seeds}; medians:")
    columns = ("quality", "result", "cost", "regret", "of_oracle", "floor_met",
               "result_floor", "star", "explore_share")  # fmt: skip
    print("| policy | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    med = {p: {c: statistics.median(r[p][c] for r in runs) for c in columns} for p in POLICIES}
    for policy in POLICIES:
        print(f"| {policy} | " + " | ".join(f"{med[policy][c]:.3f}" for c in columns) + " |")
    ratios = [r["cheapest_above"]["cost"] / r["oracle_cheapest_above"]["cost"] for r in runs]
    cost_ratio = statistics.median(ratios)
    certifiable = statistics.median(
        r["cheapest_above"]["cost"] / r["oracle_cheapest_certifiable"]["cost"] for r in runs
    )
    for seed, r, ratio in zip(seeds, runs, ratios, strict=True):
        print(f"  seed {seed}: explore of oracle {r['explore']['of_oracle']:.3f};"
              f" cheapest_above floor met {r['cheapest_above']['floor_met']:.3f}"
              f" (result {r['cheapest_above']['result_floor']:.3f}), cost ratio {ratio:.3f}"
              f" ({r['cheapest_above']['cost'] / r['oracle_cheapest_certifiable']['cost']:.3f}"
              f" to the certifiable);"
              f" star (explore) {r['explore']['star']:.3f}")  # fmt: skip
    print("targets:")
    print(f"  explore of oracle {med['explore']['of_oracle']:.3f} (>= 0.95)")
    print(f"  cheapest_above floor met {med['cheapest_above']['floor_met']:.3f} (>= 0.95;"
          f" by the result {med['cheapest_above']['result_floor']:.3f}),"
          f" cost / oracle's cheapest above {cost_ratio:.3f} (<= 1.10);"
          f" / its cheapest above {FLOOR + MARGIN} {certifiable:.3f}")  # fmt: skip
    for policy in ("explore", "best", "cheapest_above"):
        print(f"  star among the picks ({policy}) {med[policy]['star']:.3f} (>= 0.5)")


def timings() -> None:
    """The choice on a table of 10,000 agents, and the whole service at 100 to 10,000."""
    for name, (p50, p99) in selection_p99().items():
        print(f"  selection with 10,000 agents, {name}: p50 {p50:.3f} ms, p99 {p99:.3f} ms")
    print(f"  (load average during the measurement: {os.getloadavg()[0]:.1f} on"
          f" {os.cpu_count()} cores)")  # fmt: skip
    timed = [(n, True, False) for n in (100, 1000, 10_000)] + [(10_000, False, False)]
    timed += [(n, True, True) for n in (100, 1000, 10_000)]
    for agents, evidence, sqlite in timed:
        p50, worst = asyncio.run(service_route_ms(agents, evidence=evidence, sqlite=sqlite))
        print(f"  RoutingService.route, {agents:,} agents"
              f" {'with evidence' if evidence else 'registered only'}"
              f" ({'SQLite' if sqlite else 'memory store'}):"
              f" p50 {p50:.1f} ms, max {worst:.1f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
