"""NATS: deliberations applied per second, on one and on two instances.

One nats-server (JetStream on this machine's disk). An instance is a process of its own
built as ``agentladder serve`` builds it (``build_services`` on a NATS URL, its
background passes started: the skill fit, recovery, leases), with ``AGENTS`` simulated
agents of zero latency. ``CLIENTS`` clients per instance submit deliberations
(``Orchestrator.submit``, as ``POST /deliberations`` does: the admission and
``max_settling`` bounds apply, and a ``Busy`` refusal waits its ``retry_after_s``) of 5
agents drawn at random, standard scope (2 rounds, 50 calls), for ``SECONDS`` once every
instance is ready; then each instance settles (every side effect applied). A deliberation
counts as applied when its ranking, its 5 judgments and its skill evidence are applied;
the rate is those over the time from the start to the last instance settled.

Also counted: the CPU time per deliberation applied of the instances (their processes,
from the start to settled) and of the nats-server (its process, over the same time),
which on this shared 2-core machine tells more than the rate does; the ``Busy``
refusals; the side effects' retries by kind (the orchestrator's ``WriteTally``); the
compare-and-sets refused because another writer got there first, as a share of all the
attempts (the orchestrator's and the NATS store's tallies, as ``/metrics`` counts them); and
every log record naming error 10210 (too many atomic batches in flight on a stream),
which the issue's scaling run must not show.

Targets (issue 27): at least 50 deliberations applied per second on one instance; no
error 10210.

Run: ``.venv/bin/python -m benchmarks nats_deliberations``.
``AGENTLADDER_DELIBERATIONS_RUNS``, ``_SECONDS``, ``_AGENTS``, ``_CLIENTS``, ``_INSTANCES``
(``1,2``) change the defaults; ``AGENTLADDER_DELIBERATIONS_DIR`` puts the server's store
in that folder.
Figures: ``docs/benchmarks.md``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import resource
import statistics
import time
from collections import Counter
from multiprocessing.synchronize import Event as EventType
from typing import Any

import agentladder
from agentladder.config import AgentSettings, OrchestratorSettings, Settings
from agentladder.domain.deliberation import DeliberationRequest
from agentladder.domain.deliberation_record import DeliberationRecord, SideEffectState
from agentladder.errors import Busy
from agentladder.natsserver import NatsServer
from agentladder.providers.settings import SimulatedSettings
from agentladder.services.container import build_services
from benchmarks.instances import alternating, run_instances

RUNS = int(os.environ.get("AGENTLADDER_DELIBERATIONS_RUNS", "3"))
SECONDS = float(os.environ.get("AGENTLADDER_DELIBERATIONS_SECONDS", "10"))
AGENTS = int(os.environ.get("AGENTLADDER_DELIBERATIONS_AGENTS", "20"))
CLIENTS = int(os.environ.get("AGENTLADDER_DELIBERATIONS_CLIENTS", "16"))
STORE_DIR = os.environ.get("AGENTLADDER_DELIBERATIONS_DIR") or None
PER_DELIBERATION = 5
INSTANCES = tuple(
    int(n) for n in os.environ.get("AGENTLADDER_DELIBERATIONS_INSTANCES", "1,2").split(",")
)


class Named(logging.Handler):
    """Counts the log records whose message (or exception) names ``word``."""

    def __init__(self, word: str) -> None:
        super().__init__(logging.DEBUG)
        self.word = word
        self.count = 0
        self.first = ""  # the first such record, logger and message

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage() + (str(record.exc_info[1]) if record.exc_info else "")
        if self.word in text:
            self.count += 1
            self.first = self.first or f"{record.name}: {text[:300]}"


def _settings(url: str) -> Settings:
    agents = tuple(
        AgentSettings(
            name=f"agent-{n}",
            model_name=f"sim-{n}",
            backend=SimulatedSettings(quality=3.0 + 6.0 * n / AGENTS, noise=0.5, seed=n),
        )
        for n in range(AGENTS)
    )
    return Settings(store=url, agents=agents, orchestrator=OrchestratorSettings())


def _applied(record: DeliberationRecord) -> bool:
    states = (record.ranking.state, record.judgments.state, record.skill.state)
    return all(state is SideEffectState.APPLIED for state in states)


async def _instance(url: str, ready: Any, go: EventType, seed: int) -> dict[str, Any]:
    named = Named("10210")
    logging.getLogger().addHandler(named)
    services = await build_services(_settings(url))
    try:
        services.start_background()
        orchestrator = services.orchestrator
        rng = random.Random(seed)
        names = [agent.name for agent in services.settings.agents]
        records: list[DeliberationRecord] = []
        busy = 0
        ready.put(None)
        while not go.is_set():
            await asyncio.sleep(0.005)
        started = time.monotonic()
        end = started + SECONDS
        before = resource.getrusage(resource.RUSAGE_SELF)

        async def client() -> None:
            nonlocal busy
            while time.monotonic() < end:
                request = DeliberationRequest(
                    user_query=f"question {rng.randrange(10**9)}",
                    agent_names=tuple(rng.sample(names, PER_DELIBERATION)),
                )
                try:
                    records.append(await orchestrator.submit(request))
                except Busy as refused:
                    busy += 1
                    await asyncio.sleep(refused.retry_after_s)
                    continue
                await asyncio.sleep(0)  # let the deliberations it started run

        await asyncio.gather(*(client() for _ in range(CLIENTS)))
        await orchestrator.settle()
        took = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_SELF)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        tally = orchestrator.writes
        tallies = [tally, getattr(services.store, "conflicts", None)]  # NATS keeps one
        return {
            "attempts": sum((t.attempts for t in tallies if t is not None), Counter()),
            "conflicts": sum((t.conflicts for t in tallies if t is not None), Counter()),
            "submitted": len(records),
            "applied": sum(_applied(r) for r in records),
            "seconds": took,
            "busy": busy,
            "retries": dict(tally.retried),
            "e10210": named.count,
            "e10210_first": named.first,
            "cpu": cpu,
        }
    finally:
        await services.close()


def _run(server: NatsServer, instances: int, run: int) -> dict[str, Any]:
    """One configuration once: its figures."""
    each = [(run * 10 + i,) for i in range(instances)]
    results, server_cpu = run_instances(
        server, _instance, each, prefix="d", timeout_s=SECONDS + 600
    )
    seconds = max(r["seconds"] for r in results)
    retries: dict[str, int] = {}
    for r in results:
        for kind, count in r["retries"].items():
            retries[kind] = retries.get(kind, 0) + count
    applied = max(sum(r["applied"] for r in results), 1)
    attempts: Counter[str] = sum((r["attempts"] for r in results), Counter())
    conflicts: Counter[str] = sum((r["conflicts"] for r in results), Counter())
    return {
        "per_s": sum(r["applied"] for r in results) / seconds,
        "cpu_ms": sum(r["cpu"] for r in results) / applied * 1000,
        "server_cpu_ms": server_cpu / applied * 1000,
        "submitted": sum(r["submitted"] for r in results),
        "applied": sum(r["applied"] for r in results),
        "seconds": seconds,
        "busy": sum(r["busy"] for r in results),
        "retries": sum(retries.values()),
        "e10210": sum(r["e10210"] for r in results),
        "e10210_first": next((r["e10210_first"] for r in results if r["e10210_first"]), ""),
        "conflicts": 100 * sum(conflicts.values()) / max(sum(attempts.values()), 1),
        "by_op": ", ".join(
            f"{op} {100 * conflicts[op] / max(attempts[op], 1):.1f}%" for op in sorted(attempts)
        ),
    }


def main() -> None:
    """Measure one and two instances ``RUNS`` times, alternating; print the medians."""
    print(
        f"agentladder from {os.path.dirname(agentladder.__file__)}; {AGENTS} agents,"
        f" {CLIENTS} clients per instance, {SECONDS:.0f} s of submissions per run, {RUNS} runs"
    )
    figures: dict[int, list[dict[str, Any]]] = {n: [] for n in INSTANCES}
    with NatsServer(store_dir=STORE_DIR) as server:
        for run, instances in alternating(INSTANCES, RUNS):
            measured = _run(server, instances, run)
            figures[instances].append(measured)
            print(
                f"  run {run + 1}, {instances} instance(s): {measured['per_s']:.1f}"
                f" applied/s ({measured['applied']:.0f} of {measured['submitted']:.0f}"
                f" in {measured['seconds']:.1f} s), busy {measured['busy']:.0f},"
                f" side-effect retries {measured['retries']:.0f},"
                f" conflicts {measured['conflicts']:.1f}% of compare-and-sets"
                f" ({measured['by_op']}),"
                f" error 10210 {measured['e10210']:.0f}; CPU per deliberation: instances"
                f" {measured['cpu_ms']:.1f} ms, server {measured['server_cpu_ms']:.1f} ms",
                flush=True,
            )
            if measured["e10210_first"]:
                print(f"    the first record naming 10210: {measured['e10210_first']}")
    print(
        "| instances | applied/s | busy refusals | side-effect retries | error 10210"
        " | conflicts | instances' CPU ms/deliberation | server's CPU ms/deliberation |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for n in INSTANCES:
        m = {
            k: statistics.median(f[k] for f in figures[n])
            for k, v in figures[n][0].items()
            if isinstance(v, int | float)
        }
        print(
            f"| {n} | {m['per_s']:.1f} | {m['busy']:.0f} | {m['retries']:.0f}"
            f" | {max(f['e10210'] for f in figures[n]):.0f} (most in a run)"
            f" | {m['conflicts']:.1f}% | {m['cpu_ms']:.1f} | {m['server_cpu_ms']:.1f} |"
        )
    if figures.get(1):
        one = statistics.median(f["per_s"] for f in figures[1])
        verdict = "met" if one >= 50 else "MISSED"
        print(f"target: at least 50 applied/s on one instance: {one:.1f} ({verdict})")
    worst = max(f["e10210"] for n in INSTANCES for f in figures[n])
    print(f"target: no error 10210: {worst:.0f} ({'met' if worst == 0 else 'MISSED'})")


if __name__ == "__main__":
    main()
