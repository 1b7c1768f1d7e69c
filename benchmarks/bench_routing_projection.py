"""Routing's whole call at 10,000 agents, from the projection against the full read, on
SQLite and on NATS (one nats-server on loopback).

A fleet of ``AGENTS`` registered agents, each with one judgment at ``code_review`` (a
skill state and an Oracle profile) and stats with a full latency window, as in a fleet
at work. One instance (``RoutingService`` with a ``RoutingProjection`` over a
``WatchedStore``, as ``serve`` builds it) and, in the same run, the full read
(``RoutingService`` without a projection) on the same store: ``RoutingService.route``
with best and explore, count 3. Per run: ``CALLS`` routings from the projection as it
stands, ``CALLS / 2`` each right after a judgment of one agent (the projection reads that
agent again first: the call a fleet at work makes), ``CALLS / 2`` each right after
``HEARTBEATS`` heartbeats (what 10,000 agents heartbeating every 10 s send in 0.1 s),
and ``FULL_CALLS`` full reads; p50 and p99 of each, the ratio of the full read's p50 to
the projection's. ``RUNS`` runs, medians. Also the whole-fleet load (the first routing,
and after each skill fit), the projection's memory per agent (tracemalloc, one load) and
what a full collection of the garbage collector takes before and after it is loaded.

Targets (issue 27): p50 at most 5 ms and p99 at most 20 ms, SQLite and NATS.

Run: ``.venv/bin/python -m benchmarks routing_projection``; ``PROJECTION_AGENTS``,
``PROJECTION_RUNS``, ``PROJECTION_STORES`` (``sqlite,nats``) to change them.
"""

from __future__ import annotations

import asyncio
import gc
import math
import os
import random
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from typing import cast

from agentladder.domain.routing import RouteSpec, Strategy
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.errors import StoreUnavailable
from agentladder.natsserver import NatsServer
from agentladder.services.agents.registry import Registry
from agentladder.services.clock import FixedClock
from agentladder.services.oracle.batch import submit_many
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.service import Oracle
from agentladder.services.routing.projection import RoutingProjection
from agentladder.services.routing.service import RoutingService
from agentladder.services.skill.service import SkillService
from agentladder.store.base import Store
from agentladder.store.url import open_store
from agentladder.store.watched import Changes, WatchedStore
from benchmarks.common import percentile

AGENTS = int(os.environ.get("PROJECTION_AGENTS", "10000"))
RUNS = int(os.environ.get("PROJECTION_RUNS", "5"))
CALLS = 200
FULL_CALLS = 3
HEARTBEATS = 100
CHUNK = 500
SPECS = (
    RouteSpec(count=3, task_type="code_review"),
    RouteSpec(count=3, task_type="code_review", strategy=Strategy.EXPLORE),
)


async def _fleet(store: Store, registry: Registry, oracle: Oracle, agents: int) -> None:
    """``agents`` registered agents with one judgment each and full latency windows."""
    rng = random.Random(5)
    names = [f"a{i:05d}" for i in range(agents)]
    for start in range(0, agents, 100):
        await asyncio.gather(*(
            registry.heartbeat({"name": name, "input_price_per_mtok": (start + i) % 13})
            for i, name in enumerate(names[start : start + 100])
        ))  # fmt: skip
    for start in range(0, agents, CHUNK):
        await submit_many(oracle, [
            JudgmentRequest(agent_id=name, contract_id=f"c{start + i}", task_type="code_review",
                            score=round(rng.uniform(3.0, 9.0), 2))
            for i, name in enumerate(names[start : start + CHUNK])
        ])  # fmt: skip
    window = [tuple(rng.uniform(100, 900) for _ in range(64)) for _ in range(97)]
    for start in range(0, agents, CHUNK):
        await store.commit_stats(
            {name: (AgentPerformanceStats(rank=(start + i) % 5,
                                          recent_latencies_ms=window[(start + i) % 97]), 0)
             for i, name in enumerate(names[start : start + CHUNK])},
            marker=f"bench-{start}",
        )  # fmt: skip


Call = Callable[[int], Awaitable[object]]


async def _timed(call: Call, calls: int, before: Call | None = None) -> list[float]:
    times = []
    for n in range(calls):
        if before is not None:
            await before(n)
        begin = time.perf_counter()
        await call(n)
        times.append((time.perf_counter() - begin) * 1000)
    return times


def _full_collection_ms() -> float:
    """What a full collection of the garbage collector takes now (ms, median of 3)."""
    times = []
    for _ in range(3):
        begin = time.perf_counter()
        gc.collect()
        times.append((time.perf_counter() - begin) * 1000)
    return statistics.median(times)


def _router(service: RoutingService) -> Callable[[int], Awaitable[object]]:
    async def call(n: int) -> object:
        return await service.route(SPECS[n % 2], seed=n)

    return call


async def _tried(
    name: str, service: RoutingService, calls: int, before: Call | None
) -> list[float]:
    """``_timed``, or NaN when the store gave up (the full read at 10,000 agents on NATS)."""
    try:
        return await _timed(_router(service), calls, before)
    except StoreUnavailable as error:
        print(f"    {name}: {error}")
        return [math.nan]


async def measure(url: str, agents: int, runs: int) -> dict[str, list[float]]:
    """The figures of each run (ms; bytes per agent) on the store at ``url``."""
    changes = Changes()
    watched = WatchedStore(await open_store(url), changes)
    store = cast(Store, watched)
    out: dict[str, list[float]] = {}
    fast: RoutingService | None = None
    try:
        clock = FixedClock()
        skill = SkillService(store, clock=clock)
        registry = Registry(store, clock=clock, heartbeat_interval_s=1e9)
        oracle = Oracle(store, clock=clock, skill=skill)
        begin = time.perf_counter()
        await _fleet(store, registry, oracle, agents)
        print(f"    fleet of {agents:,} written in {time.perf_counter() - begin:.0f} s")
        follows = await watched.follow()  # as serve builds it (services/container.py)
        projection = RoutingProjection(
            store=store, registry=registry, skill=skill, changes=changes,
            oracle_rules=oracle.rules, tail_sd=4.0, refresh_s=1e9, follows=follows,
        )  # fmt: skip
        fast = RoutingService(store=store, registry=registry, skill=skill, projection=projection)
        full = RoutingService(store=store, registry=registry, skill=skill)
        out["gc_before_ms"] = [_full_collection_ms()]
        traced = url.startswith("sqlite")  # NATS times out its requests under tracemalloc
        if traced:
            tracemalloc.start()
        await fast.projected("code_review")
        if traced:
            out["memory_per_agent"] = [tracemalloc.get_traced_memory()[0] / agents]
            tracemalloc.stop()
        out["gc_after_ms"] = [_full_collection_ms()]
        rng = random.Random(9)

        async def judged(n: int) -> None:
            name = f"a{rng.randrange(agents):05d}"
            await oracle.submit_for_judgment(JudgmentRequest(
                agent_id=name, contract_id=f"j{n}-{rng.random()}", task_type="code_review",
                score=round(rng.uniform(3.0, 9.0), 2),
            ))  # fmt: skip

        async def heartbeats(n: int) -> None:  # 10,000 agents every 10 s: 0.1 s of them
            first = (n * HEARTBEATS) % agents
            await asyncio.gather(*(
                registry.heartbeat({"name": f"a{(first + i) % agents:05d}",
                                    "input_price_per_mtok": (first + i) % agents % 13})
                for i in range(HEARTBEATS)
            ))  # fmt: skip

        for run in range(runs):
            projection.invalidate()  # a whole-fleet load, as after a skill fit
            begin = time.perf_counter()
            await fast.projected("code_review")
            out.setdefault("load", []).append((time.perf_counter() - begin) * 1000)
            for name, service, calls, before in (
                ("projection", fast, CALLS, None),
                ("after_commit", fast, CALLS // 2, judged),
                ("after_heartbeats", fast, CALLS // 2, heartbeats),
                ("full", full, FULL_CALLS, None),
            ):
                times = await _tried(name, service, calls, before)
                out.setdefault(f"{name}_p50", []).append(statistics.median(times))
                out.setdefault(f"{name}_p99", []).append(percentile(times, 99))
            out.setdefault("ratio", []).append(out["full_p50"][-1] / out["projection_p50"][-1])
            print(f"    run {run + 1}: " + ", ".join(
                f"{k} {v[-1]:.2f}" for k, v in out.items() if k not in ("memory_per_agent",)
            ))  # fmt: skip
    finally:
        if fast is not None:
            await fast.close()
        await store.close()
    return out


def _report(name: str, out: dict[str, list[float]]) -> None:
    med = {k: statistics.median(v) for k, v in out.items()}
    print(f"  {name}, {AGENTS:,} agents, medians of {RUNS} runs:")
    print(f"    projection: p50 {med['projection_p50']:.2f} ms, p99 {med['projection_p99']:.2f} ms"
          f" (targets 5 and 20 ms)")  # fmt: skip
    print(f"    right after a commit: p50 {med['after_commit_p50']:.2f} ms,"
          f" p99 {med['after_commit_p99']:.2f} ms")  # fmt: skip
    print(f"    right after {HEARTBEATS} heartbeats: p50 {med['after_heartbeats_p50']:.2f} ms,"
          f" p99 {med['after_heartbeats_p99']:.2f} ms")  # fmt: skip
    print(f"    full read: p50 {med['full_p50']:.1f} ms, p99 {med['full_p99']:.1f} ms;"
          f" full / projection p50 {med['ratio']:.0f}x")  # fmt: skip
    memory = med.get("memory_per_agent")
    shown = "" if memory is None else f"; memory {memory:.0f} bytes per agent (one task type)"
    print(f"    whole-fleet load {med['load']:.0f} ms{shown}")
    print(f"    a full garbage collection {med['gc_before_ms']:.0f} ms before the projection,"
          f" {med['gc_after_ms']:.0f} ms with it")  # fmt: skip


def main() -> None:
    """Each store in turn; print the medians."""
    stores = os.environ.get("PROJECTION_STORES", "sqlite,nats").split(",")
    with tempfile.TemporaryDirectory(dir="/var/tmp") as folder:
        if "sqlite" in stores:
            out = asyncio.run(measure(f"sqlite:///{folder}/route.db", AGENTS, RUNS))
            _report("SQLite", out)
        if "nats" in stores:
            with NatsServer(store_dir=f"{folder}/nats") as server:
                out = asyncio.run(measure(server.url, AGENTS, RUNS))
            _report("NATS", out)
    print(f"  (load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
