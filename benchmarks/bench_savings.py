"""``GET /routing/savings``'s work at its default bound: 10,000 routed gateway answers of
ten task types in a window (``SAVINGS_RECORDS`` to change it), a third judged by a
gateway check and a fifth by a caller's feedback (some by both), on the memory store,
SQLite and NATS (a nats-server of its own, on tmpfs when there is one). Medians of three
runs of ``routing_savings``: reading the window (``list_served``), the judgments
(``get_skill_events``: two keys an answer) and the figures (``savings``: 1,000 resamples
of each task type and of the whole, on a CPU thread); then the pure figures alone at
the largest bound a caller may ask (50,000 answers).
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

from agentladder.domain.routing.savings import Judged, RoutedAnswer, savings
from agentladder.domain.routing.spec import Strategy
from agentladder.natsserver import NatsServer
from agentladder.services.routing.savings import MAX_LIMIT, judgment_keys, routing_savings
from agentladder.services.skill.evidence import judgment_evidence
from agentladder.services.skill.service import SkillService
from agentladder.store.base import Store
from agentladder.store.served import ServedRequest
from agentladder.store.url import open_store

RUNS = 3
TYPES = [f"type{n}" for n in range(10)]


def _records(count: int, now: float, rng: random.Random) -> list[ServedRequest]:
    """``count`` routed answers of the last six days, cheap or (one in five) the reference."""
    return [
        ServedRequest(
            contract_id=f"gw-{n:08d}",
            agent_id="cheap" if rng.random() < 0.8 else "dear",
            caller="team-a",
            task_type=rng.choice(TYPES),
            at=now - rng.uniform(0, 6 * 86_400),
            routed=Strategy.CHEAPEST_ABOVE,
            cost_usd=rng.uniform(1e-5, 1e-4),
            input_tokens=400,
            output_tokens=150,
            reference_agent="dear",
            reference_cost_usd=rng.uniform(1e-4, 1e-3),
            reference_skill=8.2,
            reference_sd=0.3,
            quality_floor=7.0,
        )
        for n in range(count)
    ]


async def _fill(store: Store, records: list[ServedRequest], rng: random.Random) -> int:
    """The records, a gateway check's judgment of a third, feedback on a fifth: how many
    judgments."""
    for start in range(0, len(records), 1000):
        await store.put_served(records[start : start + 1000], 30 * 86_400)
    skill = SkillService(store)
    evidence = []
    for r in records:
        if rng.random() < 1 / 3:
            evidence.append(judgment_evidence(r.agent_id, r.contract_id, r.task_type or "x",
                                              rng.uniform(5, 10), True, r.at,
                                              judge="gateway-judge:j", deferred=True))  # fmt: skip
        if rng.random() < 1 / 5:
            evidence.append(judgment_evidence(r.agent_id, f"{r.contract_id}:feedback",
                                              r.task_type or "x", rng.uniform(5, 10), True, r.at,
                                              judge="feedback:team-a", deferred=True))  # fmt: skip
    for start in range(0, len(evidence), 500):
        await skill.observe_many(evidence[start : start + 500])
    return len(evidence)


async def _measure(name: str, url: str, count: int) -> None:
    rng = random.Random(5)
    store = await open_store(url)
    try:
        now = time.time()
        judged = await _fill(store, _records(count, now, rng), rng)
        steps: dict[str, list[float]] = {"list_served": [], "get_skill_events": [], "whole": []}
        for _ in range(RUNS):
            started = time.perf_counter()
            found = await store.list_served(now - 7 * 86_400, count)
            steps["list_served"].append(time.perf_counter() - started)
            keys = [key for r in found for key in judgment_keys(r)]
            started = time.perf_counter()
            await store.get_skill_events(keys)
            steps["get_skill_events"].append(time.perf_counter() - started)
            started = time.perf_counter()
            report = await routing_savings(store, now=now, limit=count)
            steps["whole"].append(time.perf_counter() - started)
        assert report.routed == count, report.routed
        medians = ", ".join(f"{step} {statistics.median(s) * 1000:,.0f} ms"
                            for step, s in steps.items())  # fmt: skip
        print(f"{name}: {count:,} routed answers, {judged:,} judgments: {medians}")
    finally:
        await store.close()


def _pure(count: int) -> None:
    rng = random.Random(6)
    answers = [
        RoutedAnswer(
            task_type=rng.choice(TYPES),
            agent_id="cheap",
            reference_agent="dear",
            cost_usd=rng.uniform(1e-5, 1e-4),
            reference_cost_usd=rng.uniform(1e-4, 1e-3),
            reference_skill=8.2,
            reference_sd=0.3,
            judged=(Judged("judge:j", rng.uniform(5, 10), 0.2, 0.1),) if rng.random() < 0.4 else (),
        )
        for _ in range(count)
    ]
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        savings(answers, seed=1)
        times.append(time.perf_counter() - started)
    print(f"savings() alone, {count:,} answers in ten task types:"
          f" {statistics.median(times) * 1000:,.0f} ms")  # fmt: skip


def main() -> None:
    """Memory, SQLite, NATS; then the pure figures at the largest bound."""
    count = int(os.environ.get("SAVINGS_RECORDS", "10000"))
    asyncio.run(_measure("memory", "memory://", count))
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(_measure("sqlite", f"sqlite:///{Path(folder) / 'savings.db'}", count))
    shm = "/dev/shm" if Path("/dev/shm").is_dir() else None
    with tempfile.TemporaryDirectory(dir=shm) as folder, NatsServer(store_dir=folder) as server:
        asyncio.run(_measure("nats", f"{server.url}?prefix=bench", count))
    _pure(count)
    _pure(MAX_LIMIT)


if __name__ == "__main__":
    main()
