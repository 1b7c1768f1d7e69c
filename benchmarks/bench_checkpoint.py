"""How often the SQLite writer checkpoints the WAL: judgment latency at scale, throughput small.

SQLite checkpoints inside the commit that crosses ``wal_autocheckpoint`` pages; that
judgment waits while the pages are written back into the database file and synced. The
store's default depends on the file's size when opened (``sqlite.py``:
``CHECKPOINT_PAGES`` 1,000 below ``LARGE_FILE_BYTES``, ``CHECKPOINT_PAGES_LARGE`` 100 from
it); 1,000, 250 and 100 pages are each run on both kinds of file, by store URL
(``?checkpoint_pages=``):

1. On the scale benchmark's file (100,000 agents, 10,000,000 ledger lines; loaded and
   cached by ``bench_scale``): ``JUDGMENTS`` judgments to random agents one at a time
   (``Oracle.submit_for_judgment``, synchronous=FULL), the values in turn, each first in
   half of ``RUNS`` runs (a seed's second run finds its agents' pages in the OS's cache).
   Medians over runs of p50, p99, p99.9 and judgments per second. The judgments are
   undone afterwards.
2. On a small file (10 agents, as ``bench_oracle``): judgments per second with 1 and 32
   submitters, FULL and NORMAL, the values in turn, medians of ``RUNS`` runs: what the
   extra checkpoints cost where each one writes back the same few hot pages.

Run: ``.venv/bin/python -m benchmarks checkpoint`` (the scale file must fit on disk).
"""

from __future__ import annotations

import asyncio
import random
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from agentladder.config import parse_settings
from agentladder.services.container import build_services
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.store.sqlite import connections as sqlite_store
from agentladder.store.url import open_store
from benchmarks import bench_scale as scale
from benchmarks import scale_load as load
from benchmarks.bench_oracle import judge_many
from benchmarks.common import percentile

POLICIES = {
    "every 1,000 pages (SQLite's default; the baseline)": "checkpoint_pages=1000",
    "every 250 pages": "checkpoint_pages=250",
    "every 100 pages": "checkpoint_pages=100",
}
RUNS = 4
JUDGMENTS = 2000
SMALL_JUDGMENTS = 1200


def at_scale() -> None:
    """Judgment latency on the scale file under each policy."""
    path = scale.cached_sqlite(scale.AGENTS, scale.LEDGER)
    agents = [load.agent_name(i) for i in random.Random(2).sample(range(scale.AGENTS), 20_000)]
    rows, counters = load.snapshot(path, agents)
    dirty = path.with_name(path.name + ".in-use")
    dirty.touch()

    async def run(query: str, seed: int) -> list[float]:
        services = await build_services(parse_settings(None), store_url=f"sqlite:///{path}?{query}")
        rng = random.Random(seed)

        async def judge(i: int) -> None:
            body = scale.judgment(rng.choice(agents), f"bench-{uuid.uuid4().hex}", rng)
            await services.oracle.submit_for_judgment(JudgmentRequest.model_validate(body))

        try:
            return await scale.timed_async(judge, JUDGMENTS)
        finally:
            await services.close()

    samples: dict[str, list[list[float]]] = {name: [] for name in POLICIES}
    try:
        for seed in range(RUNS):
            order = list(POLICIES)
            order = order[seed % len(order) :] + order[: seed % len(order)]
            for name in order:
                samples[name].append(asyncio.run(run(POLICIES[name], seed)))
    finally:
        load.restore(path, rows, counters)
        dirty.unlink()
    print(
        f"on the scale file ({path.stat().st_size / 1e9:.1f} GB, the store's default"
        f" {sqlite_store.default_checkpoint_pages(str(path))} pages),"
        f" {JUDGMENTS} judgments one at a time x {RUNS} runs (FULL):"
    )
    for name, runs in samples.items():
        p50 = statistics.median(statistics.median(r) for r in runs)
        p99 = statistics.median(percentile(r, 99) for r in runs)
        p999 = statistics.median(percentile(r, 99.9) for r in runs)
        rate = statistics.median(len(r) / sum(r) * 1000 for r in runs)
        print(
            f"  {name}: judgment p50 {p50:.2f} ms, p99 {p99:.2f} ms, p99.9 {p999:.2f} ms,"
            f" {rate:,.0f} judgments/s; runs' p99 {[round(percentile(r, 99), 2) for r in runs]}"
        )


def small() -> None:
    """Judgments per second on a small file under each policy."""
    with tempfile.TemporaryDirectory() as folder:
        names = iter(range(10_000))

        def once(query: str, synchronous: str, submitters: int) -> int:
            path = Path(folder) / f"{next(names)}.db"
            url = f"sqlite:///{path}?synchronous={synchronous}&{query}"
            return asyncio.run(judge_many(lambda: open_store(url), SMALL_JUDGMENTS, submitters))

        print(
            f"on a small file (the store's default {sqlite_store.CHECKPOINT_PAGES} pages),"
            f" {SMALL_JUDGMENTS} judgments over 10 agents x {RUNS} runs:"
        )
        for synchronous in ("full", "normal"):
            for submitters in (1, 32):
                rates: dict[str, list[float]] = {name: [] for name in POLICIES}
                for run in range(RUNS):
                    order = list(POLICIES)
                    for name in order[run % len(order) :] + order[: run % len(order)]:
                        start = time.perf_counter()
                        done = once(POLICIES[name], synchronous, submitters)
                        rates[name].append(done / (time.perf_counter() - start))
                medians = {name: statistics.median(r) for name, r in rates.items()}
                base = next(iter(medians.values()))
                figures = "; ".join(
                    f"{name}: {rate:,.0f}/s ({rate / base:.2f})" for name, rate in medians.items()
                )
                print(f"  {synchronous}, {submitters} submitters: {figures}")


def main() -> None:
    """Both comparisons."""
    small()
    at_scale()
