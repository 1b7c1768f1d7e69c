"""Deliberations per second end to end, and what the orchestration adds to the agents' time.

Five simulated agents of zero latency, 2 rounds, on SQLite (synchronous=normal and full).
Measured in the same run:
- baseline: the agents' own time: the same calls (per round, 5 proposals at once, then
  20 evaluations at once) made straight to the providers, no orchestrator, no store;
- orchestrated: what ``Orchestrator.submit`` does with a slot free, awaited: ``prepare``
  (selection), the slot taken and the running record's save, and the run (the rounds, then
  the completed record's save);
- side effects, per deliberation: the ranking update (one atomic commit of 5 agents'
  stats), the 5 Oracle judgments and the skill evidence (one skill event with its 40 peer
  scores and the 5 agents' and the fleet's states), p50 and p99.
Target: the orchestration adds at most 5 ms per deliberation beyond the agents' time; the
skill side effect at most 2 ms per deliberation, p50 (the issue "skill that holds on real
evaluation data", which replaced an earlier 0.5 ms).

Run: ``make bench`` or ``.venv/bin/python -m benchmarks orchestrator``.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from agentladder.domain.deliberation import DeliberationRequest
from agentladder.providers.base import EvaluateRequest, ProposeRequest
from agentladder.services.deliberations.side_effects import (
    apply_judgments,
    apply_ranking,
    apply_skill,
)
from agentladder.services.skill.service import SkillService
from agentladder.store.sqlite.store import SqliteStore
from benchmarks.common import percentile
from tests.services.world import simulated, world

AGENTS = {"a": 5.0, "b": 6.0, "c": 7.0, "d": 8.0, "e": 9.0}
DELIBERATIONS = 200


async def agents_only(count: int) -> list[float]:
    """Milliseconds per deliberation of the bare provider calls."""
    providers = simulated(AGENTS, noise=0.5)
    out = []
    for n in range(count):
        start = time.perf_counter()
        for number in (1, 2):
            ask = ProposeRequest(deliberation_id=f"d{n}", round=number, user_query="q")
            proposals = await asyncio.gather(*(p.propose(ask) for p in providers.values()))
            await asyncio.gather(
                *(
                    evaluator.evaluate(
                        EvaluateRequest(deliberation_id=f"d{n}", round=number, user_query="q",
                                        proposal=proposal.content)
                    )
                    for author, proposal in zip(providers, proposals, strict=True)
                    for name, evaluator in providers.items()
                    if name != author
                )
            )  # fmt: skip
        out.append((time.perf_counter() - start) * 1000)
    return out


async def orchestrated(path: Path, synchronous: str, count: int) -> dict[str, list[float]]:
    """Milliseconds per deliberation through the orchestrator, and of its side effects."""
    store = SqliteStore(path, synchronous=synchronous)
    try:
        skill = SkillService(store)
        orchestrator = await world(store, simulated(AGENTS, noise=0.5), skill=skill)
        request = DeliberationRequest(user_query="q", agent_names=list(AGENTS), scope="standard")
        times: dict[str, list[float]] = {"run": [], "ranking": [], "judgments": [], "skill": []}
        for _ in range(count):
            start = time.perf_counter()
            record = await orchestrator.prepare(request)
            assert await orchestrator._start_now(record)  # a slot is free: stored running
            await orchestrator._save(record)
            await orchestrator._run_in_slot(record)  # as submit runs it
            times["run"].append((time.perf_counter() - start) * 1000)
            await orchestrator.close()  # side effects are timed below, one at a time
            start = time.perf_counter()
            await apply_ranking(store, record, int(time.time()))
            times["ranking"].append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            await apply_judgments(orchestrator.oracle, record)
            times["judgments"].append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            await apply_skill(skill, record)
            times["skill"].append((time.perf_counter() - start) * 1000)
        return times
    finally:
        await store.close()


def main() -> None:
    """Print per-deliberation medians, the overhead over the agents' time, side effects."""
    base = asyncio.run(agents_only(DELIBERATIONS))
    base_median = statistics.median(base)
    print(f"agents' own time (bare provider calls): median {base_median:.2f} ms per deliberation")
    for synchronous in ("normal", "full"):
        with tempfile.TemporaryDirectory() as folder:
            times = asyncio.run(orchestrated(Path(folder) / "o.db", synchronous, DELIBERATIONS))
        run = statistics.median(times["run"])
        overhead = run - base_median
        verdict = "meets" if overhead <= 5.0 else "MISSES"
        print(
            f"synchronous={synchronous}: {1000 / run:,.0f} deliberations/s; median {run:.2f} ms,"
            f" orchestration adds {overhead:.2f} ms ({verdict} target <= 5 ms)"
        )
        for effect in ("ranking", "judgments", "skill"):
            samples = times[effect]
            print(
                f"  {effect} side effect: p50 {percentile(samples, 50):.2f} ms,"
                f" p99 {percentile(samples, 99):.2f} ms"
            )
        added = statistics.median(times["skill"])
        verdict = "meets" if added <= 2.0 else "MISSES"
        print(f"  the skill evidence adds {added:.2f} ms per deliberation ({verdict} target <= 2)")
