"""Judgments per second through ``Oracle.submit_for_judgment`` on SQLite, against plain sqlite3.

Each judgment goes the whole way: idempotency check, fold with the rules, commit of event
+ ledger lines + profile in one transaction, result. Run sequentially (one submitter)
and with 32 concurrent submitters over 10 agents. The baseline is the storage
benchmark's plain sqlite3 loop (one upsert and one insert per transaction), run in this
process on the same settings. Medians of several runs. Target: ratio >= 0.4.

Run: ``make bench`` or ``.venv/bin/python -m benchmarks oracle``.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.service import Oracle
from agentladder.store.base import Store
from agentladder.store.sqlite.store import SqliteStore
from benchmarks.bench_sqlite_store import baseline
from benchmarks.common import median_rate, report_ratio

JUDGMENTS = 1200
RUNS = 5
CONCURRENCY = 32


async def judge_many(
    open_store: Callable[[], Awaitable[Store]], count: int, concurrency: int
) -> int:
    """Submit ``count`` judgments over 10 agents with ``concurrency`` submitters to an
    Oracle on the store ``open_store`` opens (and this closes); ``count``."""
    store = await open_store()
    oracle = Oracle(store)
    queue: Iterator[int] = iter(range(count))

    async def submitter() -> None:
        for i in queue:
            await oracle.submit_for_judgment(
                JudgmentRequest(
                    agent_id=f"agent-{i % 10}", contract_id=f"c-{i}", task_type=f"t{i % 3}",
                    score=8.5, cost=0.01, budget=0.02, new_agent=True,
                )
            )  # fmt: skip

    try:
        await asyncio.gather(*(submitter() for _ in range(concurrency)))
    finally:
        await store.close()
    return count


def through_oracle(path: Path, synchronous: str, count: int, concurrency: int) -> int:
    """``judge_many`` on a new ``SqliteStore`` at ``path``."""

    async def opened() -> Store:
        return SqliteStore(path, synchronous=synchronous)

    return asyncio.run(judge_many(opened, count, concurrency))


def main() -> None:
    """Print rates and ratios for NORMAL and FULL synchronous, sequential and concurrent."""
    for synchronous, count in (("normal", JUDGMENTS), ("full", JUDGMENTS)):
        with tempfile.TemporaryDirectory() as folder:
            names = iter(range(1000))

            def fresh(kind: str, folder: str = folder, names: Iterator[int] = names) -> Path:
                return Path(folder) / f"{kind}-{next(names)}.db"

            def base_run(s: str = synchronous, n: int = count) -> int:
                return baseline(fresh("b"), s, n)

            base, _ = median_rate(base_run, RUNS)
            for concurrency in (1, CONCURRENCY):

                def oracle_run(s: str = synchronous, n: int = count, c: int = concurrency) -> int:
                    return through_oracle(fresh("o"), s, n, c)

                rate, runs = median_rate(oracle_run, RUNS)
                report_ratio(
                    f"submit_for_judgment/s (synchronous={synchronous}, {concurrency} submitters,"
                    f" {count} x {RUNS} runs)",
                    rate, base, "judgments/s", 0.4,
                )  # fmt: skip
                print(f"  runs {[round(r) for r in runs]}")
