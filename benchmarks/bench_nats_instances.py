"""NATS: scored judgments with the skill model on and off, on one and on two instances.

One nats-server (JetStream on this machine's disk). An instance is a process of its own
(an ``Oracle`` over a ``NatsStore``, with a ``SkillService`` or without: the skill model
on or off) with ``CLIENTS`` concurrent clients, each sending scored judgments
(``Oracle.submit_for_judgment``: the award, then the skill evidence) to random agents of
``AGENTS``, for ``SECONDS`` after all instances are ready. Each configuration gets a fresh
prefix (empty buckets and streams); configurations run in turn, alternating, ``RUNS``
times. Figures per configuration, medians over the runs: judgments per second
fleet-wide, p50 and p99 of a judgment, and the share of the skill writes'
compare-and-set attempts that conflicted (the store's ``WriteTally``, op ``skill``), and the
CPU time per judgment of the instances (their processes, while their clients ran) and of
the nats-server (its process, over the run; Linux ``/proc``): on this 2-core machine the
two share the cores, so what a judgment costs in CPU is what bounds the rate.

Targets (issue 27): skill on at least 0.8 of off (one instance); two instances at least
1.0 of one (skill on); conflicts at most 5% of attempts.

Run: ``.venv/bin/python -m benchmarks nats_instances``. ``AGENTLADDER_INSTANCES_RUNS``,
``AGENTLADDER_INSTANCES_SECONDS``, ``AGENTLADDER_INSTANCES_AGENTS``,
``AGENTLADDER_INSTANCES_CLIENTS`` change the defaults; ``AGENTLADDER_INSTANCES_DIR`` puts
the server's store in that folder (``/dev/shm/...``: no disk sync). Another checkout's
code is measured by putting its ``src`` first on ``PYTHONPATH`` (the processes inherit
it). Figures: ``docs/benchmarks.md``.
"""

from __future__ import annotations

import asyncio
import os
import random
import resource
import statistics
import time
from dataclasses import dataclass
from multiprocessing.synchronize import Event as EventType
from typing import Any

import agentladder
from agentladder.domain.rules import OracleRules
from agentladder.natsserver import NatsServer
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.service import Oracle
from agentladder.services.skill.service import SkillService
from agentladder.store.url import open_store
from benchmarks.common import percentile
from benchmarks.instances import alternating, run_instances

RUNS = int(os.environ.get("AGENTLADDER_INSTANCES_RUNS", "3"))
SECONDS = float(os.environ.get("AGENTLADDER_INSTANCES_SECONDS", "8"))
AGENTS = int(os.environ.get("AGENTLADDER_INSTANCES_AGENTS", "1000"))
CLIENTS = int(os.environ.get("AGENTLADDER_INSTANCES_CLIENTS", "8"))
STORE_DIR = os.environ.get("AGENTLADDER_INSTANCES_DIR") or None
"""The server's store folder (default: a temporary one on this machine's disk)."""
TASK_TYPES = ("code", "review", "research")


@dataclass(frozen=True)
class Config:
    """One configuration: the skill model on or off, and how many instances."""

    skill: bool
    instances: int

    @property
    def name(self) -> str:
        """As the table prints it."""
        return f"skill {'on' if self.skill else 'off'}, {self.instances} instance(s)"


CONFIGS = (Config(True, 1), Config(False, 1), Config(True, 2), Config(False, 2))


async def _instance(url: str, ready: Any, go: EventType, skill: bool, seed: int) -> dict[str, Any]:
    store = await open_store(url)
    try:
        rules = OracleRules(accept_unregistered=True)  # judgments name agents as they come
        oracle = Oracle(store, rules, skill=SkillService(store) if skill else None)
        rng = random.Random(seed)
        latencies: list[float] = []
        ready.put(None)
        while not go.is_set():
            await asyncio.sleep(0.005)
        end = time.monotonic() + SECONDS
        before = resource.getrusage(resource.RUSAGE_SELF)

        async def client(number: int) -> None:
            count = 0
            while time.monotonic() < end:
                request = JudgmentRequest(
                    agent_id=f"agent-{rng.randrange(AGENTS)}",
                    contract_id=f"c-{seed}-{number}-{count}",
                    task_type=rng.choice(TASK_TYPES),
                    score=round(rng.uniform(0, 10), 2),
                )
                start = time.perf_counter()
                await oracle.submit_for_judgment(request)
                latencies.append((time.perf_counter() - start) * 1000)
                count += 1

        await asyncio.gather(*(client(n) for n in range(CLIENTS)))
        after = resource.getrusage(resource.RUSAGE_SELF)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        tally = getattr(store, "conflicts", None)
        attempts = tally.attempts["skill"] if tally is not None else 0
        conflicts = tally.conflicts["skill"] if tally is not None else 0
        return {"latencies": latencies, "attempts": attempts, "conflicts": conflicts, "cpu": cpu}
    finally:
        await store.close()


def _run(server: NatsServer, config: Config, run: int) -> dict[str, float]:
    """One configuration once: its figures."""
    each = [(config.skill, run * 10 + i) for i in range(config.instances)]
    results, server_cpu = run_instances(
        server, _instance, each, prefix="b", timeout_s=SECONDS + 300
    )
    latencies = sorted(x for r in results for x in r["latencies"])
    attempts = sum(r["attempts"] for r in results)
    conflicts = sum(r["conflicts"] for r in results)
    count = max(len(latencies), 1)
    return {
        "per_s": len(latencies) / SECONDS,
        "cpu_ms": sum(r["cpu"] for r in results) / count * 1000,
        "server_cpu_ms": server_cpu / count * 1000,
        "p50": percentile(latencies, 50),
        "p99": percentile(latencies, 99),
        "conflicts": conflicts / attempts if attempts else 0.0,
    }


def main() -> None:
    """Measure every configuration ``RUNS`` times, alternating; print the medians."""
    print(
        f"agentladder from {os.path.dirname(agentladder.__file__)}; {AGENTS} agents,"
        f" {CLIENTS} clients per instance, {SECONDS:.0f} s per run, {RUNS} runs"
    )
    figures: dict[Config, list[dict[str, float]]] = {c: [] for c in CONFIGS}
    with NatsServer(store_dir=STORE_DIR) as server:
        for run, config in alternating(CONFIGS, RUNS):
            measured = _run(server, config, run)
            figures[config].append(measured)
            print(
                f"  run {run + 1} {config.name}: {measured['per_s']:.0f}/s, p50"
                f" {measured['p50']:.1f} ms, p99 {measured['p99']:.1f} ms, conflicts"
                f" {measured['conflicts']:.1%}, CPU per judgment: instances"
                f" {measured['cpu_ms']:.2f} ms, server {measured['server_cpu_ms']:.2f} ms",
                flush=True,
            )
    median = {
        c: {k: statistics.median(m[k] for m in figures[c]) for k in figures[c][0]} for c in CONFIGS
    }
    print(
        "| configuration | judgments/s | p50 ms | p99 ms | skill conflicts"
        " | instances' CPU ms/judgment | server's CPU ms/judgment |"
    )
    print("|---|---|---|---|---|---|---|")
    for c in CONFIGS:
        m = median[c]
        print(
            f"| {c.name} | {m['per_s']:.0f} | {m['p50']:.1f} | {m['p99']:.1f}"
            f" | {m['conflicts']:.1%} | {m['cpu_ms']:.2f} | {m['server_cpu_ms']:.2f} |"
        )
    on, off = median[Config(True, 1)]["per_s"], median[Config(False, 1)]["per_s"]
    two = median[Config(True, 2)]["per_s"]
    print(f"skill on / off, one instance: {on / off:.2f} (target >= 0.8)")
    cost = {
        skill: median[Config(skill, 1)]["cpu_ms"] + median[Config(skill, 1)]["server_cpu_ms"]
        for skill in (True, False)
    }
    print(
        f"CPU per judgment, one instance, instance + server: skill on {cost[True]:.2f} ms,"
        f" off {cost[False]:.2f} ms (off / on: {cost[False] / cost[True]:.2f}, the rate"
        " ratio where the CPU is the bound)"
    )
    print(f"two instances / one, skill on: {two / on:.2f} (target >= 1.0)")
    print(
        f"skill conflicts, two instances: {median[Config(True, 2)]['conflicts']:.1%} (target <= 5%)"
    )
