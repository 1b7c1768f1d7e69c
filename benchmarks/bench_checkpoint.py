"""How often the SQLite writer checkpoints the WAL: judgment latency on the scale file.

SQLite checkpoints inside the commit that crosses ``wal_autocheckpoint`` pages; that
judgment waits while the pages are written back into the database file and synced. On
the scale benchmark's file (100,000 agents, 10,000,000 ledger lines; loaded and cached by
``bench_scale``), judgments to random agents (``Oracle.submit_for_judgment``, one at a
time, synchronous=FULL) are timed with the writer's checkpoint at the store's default
(SQLite's 1,000 pages: the baseline) and at ``CANDIDATE`` pages (the store URL's
``?checkpoint_pages=``), alternately (each first in half the runs: a seed's second run
finds its agents' pages in the OS's cache), ``RUNS`` runs each. Printed: medians over runs of
p50, p99 and judgments per second. The judgments are undone afterwards.

Run: ``.venv/bin/python -m benchmarks checkpoint`` (the scale file must fit on disk).
"""

from __future__ import annotations

import asyncio
import random
import statistics
import uuid

from agentladder.config import parse_settings
from agentladder.services.container import build_services
from agentladder.services.oracle_models import JudgmentRequest
from agentladder.store import sqlite as sqlite_store
from benchmarks import bench_scale as scale
from benchmarks import scale_load as load
from benchmarks.common import percentile

CANDIDATE = 500
RUNS = 4
JUDGMENTS = 2000


def main() -> None:
    """Alternate runs at the store's default and at the candidate; print medians."""
    default = sqlite_store.CHECKPOINT_PAGES
    path = scale.cached_sqlite(scale.AGENTS, scale.LEDGER)
    agents = [load.agent_name(i) for i in random.Random(2).sample(range(scale.AGENTS), 20_000)]
    rows, counters = load.snapshot(path, agents)
    dirty = path.with_name(path.name + ".in-use")
    dirty.touch()

    async def run(pages: int, seed: int) -> list[float]:
        url = f"sqlite:///{path}?checkpoint_pages={pages}"
        services = await build_services(parse_settings(None), store_url=url)
        rng = random.Random(seed)

        async def judge(i: int) -> None:
            body = scale.judgment(rng.choice(agents), f"bench-{uuid.uuid4().hex}", rng)
            await services.oracle.submit_for_judgment(JudgmentRequest.model_validate(body))

        try:
            return await scale.timed_async(judge, JUDGMENTS)
        finally:
            await services.close()

    samples: dict[int, list[list[float]]] = {default: [], CANDIDATE: []}
    try:
        for seed in range(RUNS):
            order = list(samples.items())
            if seed % 2:  # the second run of a seed finds the same agents' pages cached
                order.reverse()
            for pages, runs in order:
                runs.append(asyncio.run(run(pages, seed)))
    finally:
        load.restore(path, rows, counters)
        dirty.unlink()
    for pages, runs in samples.items():
        label = "the store's default (baseline)" if pages == default else "the candidate"
        p50 = statistics.median(statistics.median(r) for r in runs)
        p99 = statistics.median(percentile(r, 99) for r in runs)
        rate = statistics.median(len(r) / sum(r) * 1000 for r in runs)
        print(
            f"checkpoint every {pages} pages ({label}): judgment p50 {p50:.2f} ms,"
            f" p99 {p99:.2f} ms, {rate:,.0f} judgments/s; runs' p99"
            f" {[round(percentile(r, 99), 2) for r in runs]}"
        )
