"""SQLite: scored judgments per second with the skill model off and inline, and what one
more write per judgment costs: whether a skill queue would pay on SQLite.

On NATS a judgment's skill step can be queued and applied after its answer (docs/storage-
nats.md, "The skill queue"). On SQLite a queue would be the same step, later, plus a write
of the queue's own: the step is already in the award's transaction (one job of the
writer, ``Store.apply_oracle_then_skill``). Each configuration sends ``JUDGMENTS`` scored
judgments through ``Oracle.submit_for_judgment`` with ``CONCURRENCY`` submitters to random
agents of ``AGENTS``, on a fresh database file; the configurations alternate, ``RUNS``
times; medians. On SQLite one process holds the store (one writer), so a queue's step is
taken by the same process after the answer: sustained, a queue costs the step plus its
write. ``off + write``: the skill model off and one more transaction per
judgment (a lease's upsert: one small row in a transaction of its own), what a queue would
add to the request path at the least.

Run: ``.venv/bin/python -m benchmarks sqlite_skill``. Figures: ``docs/benchmarks.md``.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import tempfile
import time
from pathlib import Path

from agentladder.domain.rules import OracleRules
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.service import Oracle
from agentladder.services.skill.service import SkillService
from agentladder.store.sqlite.store import SqliteStore
from benchmarks.instances import alternating

JUDGMENTS = 2000
CONCURRENCY = 8
AGENTS = 1000
RUNS = 3
CONFIGS = ("off", "inline", "off + write")
TASK_TYPES = ("code", "review", "research")


async def _rate(path: Path, config: str, seed: int) -> float:
    store = SqliteStore(path)
    try:
        skill = SkillService(store) if config == "inline" else None
        oracle = Oracle(store, OracleRules(accept_unregistered=True), skill=skill)
        rng = random.Random(seed)
        numbers = iter(range(JUDGMENTS))

        async def submitter() -> None:
            for n in numbers:
                agent = f"agent-{rng.randrange(AGENTS)}"
                await oracle.submit_for_judgment(
                    JudgmentRequest(
                        agent_id=agent, contract_id=f"c-{n}", task_type=rng.choice(TASK_TYPES),
                        score=round(rng.uniform(0, 10), 2),
                    )
                )  # fmt: skip
                if config == "off + write":
                    await store.renew_lease(f"q-{n}", time.time() + 60)

        start = time.perf_counter()
        await asyncio.gather(*(submitter() for _ in range(CONCURRENCY)))
        return JUDGMENTS / (time.perf_counter() - start)
    finally:
        await store.close()


def main() -> None:
    """Every configuration ``RUNS`` times, alternating; the medians and ratios."""
    rates: dict[str, list[float]] = {c: [] for c in CONFIGS}
    with tempfile.TemporaryDirectory() as folder:
        for index, (run, config) in enumerate(alternating(CONFIGS, RUNS)):
            path = Path(folder) / f"{index}.db"
            rate = asyncio.run(_rate(path, config, seed=run))
            rates[config].append(rate)
            print(f"  run {run + 1} {config}: {rate:.0f} judgments/s", flush=True)
    median = {c: statistics.median(r) for c, r in rates.items()}
    for config in CONFIGS:
        print(f"{config}: {median[config]:.0f} judgments/s (median of {RUNS})")
    step_ms = 1000 / median["inline"] - 1000 / median["off"]
    write_ms = 1000 / median["off + write"] - 1000 / median["off"]
    queued = 1000 / (1000 / median["off"] + step_ms + write_ms)
    print(
        f"the skill step inline costs {step_ms:.2f} ms of a judgment, one more write"
        f" {write_ms:.2f} ms; with a queue the answer would cost the write instead of the"
        f" step, but the same process (one writer) still takes the step: sustained, at most"
        f" {queued:.0f} judgments/s against {median['inline']:.0f} inline"
        f" ({'inline wins' if queued <= median['inline'] else 'the queue wins'})"
    )
