"""NATS: scored judgments with the skill model off, inline and queued, on one and on two
instances.

One nats-server (JetStream on this machine's disk). An instance is a process of its own
(an ``Oracle`` over a ``NatsStore``, with a ``SkillService`` or without) with
``CLIENTS`` concurrent clients, each sending scored judgments
(``Oracle.submit_for_judgment``) to random agents of ``AGENTS``, for ``SECONDS`` after
all instances are ready. The skill model is off, inline (the award, then the skill
evidence applied on the request path) or queued (the store's ``skill_queue=on``: the
award written carrying its evidence; each instance runs its ``SkillApplier``, and the
one holding the queue's lease applies the evidence in batches), or queued apart
(``skill_queue_applier=apart``: the instances run no applier; one more process runs only
``SkillApplier``, as ``agentladder skill apply`` does, and its CPU counts with the
instances'). Each configuration gets a fresh prefix (empty buckets and streams);
configurations run in turn, alternating, ``RUNS`` times. Figures per configuration,
medians over the runs: judgments per second fleet-wide, p50 and p99 of a judgment, the
share of the skill writes' compare-and-set attempts that conflicted (the store's
``WriteTally``, op ``skill``), the CPU time per judgment of the instances (their
processes, while their clients ran and, queued, until their appliers had applied every
evidence) and of the nats-server (its process, over the same time; Linux ``/proc``),
and, queued, the p99 of the skill lag (the age of the oldest evidence not applied yet,
sampled every ``LAG_EVERY_S`` by the first instance while the clients run) and the time
the queue took to drain after them.

Targets: skill queued at least 0.8 of off (one instance), with a skill lag p99 of at
most 2 s; two instances' CPU per judgment (instances and server) at most 1.15 of one
instance's; conflicts at most 5% of attempts.

Run: ``.venv/bin/python -m benchmarks nats_instances``. ``AGENTLADDER_INSTANCES_RUNS``,
``AGENTLADDER_INSTANCES_SECONDS``, ``AGENTLADDER_INSTANCES_AGENTS``,
``AGENTLADDER_INSTANCES_CLIENTS`` change the defaults; ``AGENTLADDER_INSTANCES_DIR``
puts the server's store in that folder (``/dev/shm/...``: no disk sync);
``AGENTLADDER_INSTANCES_CONFIGS`` picks configurations by name (``queued-1,off-1``).
Another checkout's code is measured by putting its ``src`` first on ``PYTHONPATH`` (the
processes inherit it). Figures: ``docs/benchmarks.md``.
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
from agentladder.services.clock import SystemClock
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.service import Oracle
from agentladder.services.skill.applier import SkillApplier
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


LAG_EVERY_S = 0.25
"""How often the first instance samples the skill lag while its clients run (queued)."""
SKILLS = ("off", "inline", "queued", "apart")


@dataclass(frozen=True)
class Config:
    """One configuration: the skill model off, inline or queued, and how many instances."""

    skill: str
    instances: int

    @property
    def name(self) -> str:
        """As the table prints it."""
        return f"skill {self.skill}, {self.instances} instance(s)"

    @property
    def short(self) -> str:
        """As ``AGENTLADDER_INSTANCES_CONFIGS`` names it."""
        return f"{self.skill}-{self.instances}"


ALL_CONFIGS = (
    Config("queued", 1), Config("off", 1), Config("inline", 1), Config("apart", 1),
    Config("queued", 2), Config("off", 2),
)  # fmt: skip
_PICKED = os.environ.get("AGENTLADDER_INSTANCES_CONFIGS", "")
CONFIGS = tuple(c for c in ALL_CONFIGS if not _PICKED or c.short in _PICKED.split(","))


async def _sample_lag(skill: SkillService, end: float, lags: list[float]) -> None:
    """The skill lag every ``LAG_EVERY_S`` until ``end`` (seconds, ``time.monotonic``)."""
    queue = skill.queue
    assert queue is not None
    while time.monotonic() < end:
        lags.append((await queue.state()).lag_s(time.time()))
        await asyncio.sleep(LAG_EVERY_S)


async def _instance(
    url: str, ready: Any, go: EventType, mode: str, seed: int, first: bool
) -> dict[str, Any]:
    if mode == "queued":
        url += "&skill_queue=on"
    elif mode in ("apart", "applier"):
        url += "&skill_queue=on&skill_queue_applier=apart"
    store = await open_store(url)
    applier = None
    try:
        rules = OracleRules(accept_unregistered=True)  # judgments name agents as they come
        skill = SkillService(store) if mode != "off" else None
        oracle = Oracle(store, rules, skill=skill)
        if skill is not None and skill.queue is not None and mode != "apart":
            applier = SkillApplier(skill.queue, skill, f"bench-{seed}", SystemClock())
            await applier.start()
        rng = random.Random(seed)
        latencies: list[float] = []
        lags: list[float] = []
        ready.put(None)
        while not go.is_set():
            await asyncio.sleep(0.005)
        end = time.monotonic() + SECONDS
        before = resource.getrusage(resource.RUSAGE_SELF)

        async def client(number: int) -> None:
            count = 0
            while mode != "applier" and time.monotonic() < end:
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

        sampling = []
        if first and skill is not None and skill.queue is not None:
            sampling.append(_sample_lag(skill, end, lags))
        await asyncio.gather(*(client(n) for n in range(CLIENTS)), *sampling)
        if mode == "applier":
            await asyncio.sleep(max(0.0, end - time.monotonic()))
        stopped = time.monotonic()
        if skill is not None:
            await skill.drained(timeout_s=600)  # what the clients left, applied
        drain_s = time.monotonic() - stopped
        after = resource.getrusage(resource.RUSAGE_SELF)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        tally = getattr(store, "conflicts", None)
        attempts = tally.attempts["skill"] if tally is not None else 0
        conflicts = tally.conflicts["skill"] if tally is not None else 0
        return {
            "latencies": latencies, "attempts": attempts, "conflicts": conflicts, "cpu": cpu,
            "lags": lags, "drain_s": drain_s,
            "applied": 0 if applier is None else applier.applied,
        }  # fmt: skip
    finally:
        if applier is not None:
            await applier.stop()
        await store.close()


def _run(server: NatsServer, config: Config, run: int) -> dict[str, float]:
    """One configuration once: its figures."""
    each = [(config.skill, run * 10 + i, i == 0) for i in range(config.instances)]
    if config.skill == "apart":  # the applier's own process
        each.append(("applier", run * 10 + config.instances, False))
    results, server_cpu = run_instances(
        server, _instance, each, prefix="b", timeout_s=SECONDS + 300
    )
    latencies = sorted(x for r in results for x in r["latencies"])
    attempts = sum(r["attempts"] for r in results)
    conflicts = sum(r["conflicts"] for r in results)
    count = max(len(latencies), 1)
    lags = sorted(x for r in results for x in r["lags"])
    applied = sum(r["applied"] for r in results)
    if config.skill in ("queued", "apart") and applied < len(latencies):
        raise RuntimeError(f"{applied} evidences applied of {len(latencies)} judgments")
    return {
        "lag_p99": percentile(lags, 99) if lags else 0.0,
        "drain_s": max(r["drain_s"] for r in results),
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
                f" {measured['cpu_ms']:.2f} ms, server {measured['server_cpu_ms']:.2f} ms;"
                f" skill lag p99 {measured['lag_p99']:.2f} s, drained in"
                f" {measured['drain_s']:.2f} s",
                flush=True,
            )
    median = {
        c: {k: statistics.median(m[k] for m in figures[c]) for k in figures[c][0]} for c in CONFIGS
    }
    print(
        "| configuration | judgments/s | p50 ms | p99 ms | skill conflicts"
        " | instances' CPU ms/judgment | server's CPU ms/judgment | skill lag p99 s |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for c in CONFIGS:
        m = median[c]
        print(
            f"| {c.name} | {m['per_s']:.0f} | {m['p50']:.1f} | {m['p99']:.1f}"
            f" | {m['conflicts']:.1%} | {m['cpu_ms']:.2f} | {m['server_cpu_ms']:.2f}"
            f" | {m['lag_p99']:.2f} |"
        )
    _targets(median)


def _targets(median: dict[Config, dict[str, float]]) -> None:
    """The targets' ratios, for the configurations measured."""

    def total(c: Config) -> float:
        return median[c]["cpu_ms"] + median[c]["server_cpu_ms"]

    one, off, two = Config("queued", 1), Config("off", 1), Config("queued", 2)
    if one in median and off in median:
        ratio = median[one]["per_s"] / median[off]["per_s"]
        print(f"skill queued / off, one instance: {ratio:.2f} (target >= 0.8)")
        print(f"skill lag p99, one instance: {median[one]['lag_p99']:.2f} s (target <= 2 s)")
    apart = Config("apart", 1)
    if apart in median and off in median:
        ratio = median[apart]["per_s"] / median[off]["per_s"]
        print(
            f"skill queued apart / off, one instance and one applier process: {ratio:.2f};"
            f" skill lag p99 {median[apart]['lag_p99']:.2f} s"
        )
    inline = Config("inline", 1)
    if inline in median and off in median:
        ratio = median[inline]["per_s"] / median[off]["per_s"]
        print(f"skill inline / off, one instance: {ratio:.2f}")
    if one in median and two in median:
        print(
            f"CPU per judgment, instances + server, skill queued: one instance"
            f" {total(one):.2f} ms, two {total(two):.2f} ms ({total(two) / total(one):.2f};"
            " target <= 1.15)"
        )
        print(f"skill conflicts, two instances: {median[two]['conflicts']:.1%} (target <= 5%)")
