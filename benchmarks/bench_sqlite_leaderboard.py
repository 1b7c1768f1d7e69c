"""Top-100 leaderboard latency over 1,000,000 SQLite profiles, overall and per task type.

The profiles are written straight into the store's tables (one specialization each over
five task types), then ``SqliteStore.leaderboard`` is timed, and beside it, as the
baseline, the same ORDER BY ... LIMIT 100 query on a plain sqlite3 connection. Medians
and p99 of repeated calls. Target: 2 ms or less through the store.

Run: ``make bench`` or ``.venv/bin/python -m benchmarks sqlite_leaderboard``.
Set ``AGENTLADDER_BENCH_PROFILES`` to use another count.
"""

from __future__ import annotations

import asyncio
import os
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from agentladder.store.sqlite.store import SqliteStore
from benchmarks.common import percentile

PROFILES = int(os.environ.get("AGENTLADDER_BENCH_PROFILES", "1000000"))
CALLS = 300
TASK_TYPES = ("sql", "poetry", "vision", "audit", "code")


def populate(path: Path, count: int) -> None:
    """``count`` profiles and one specialization each, in batches of 50,000."""
    asyncio.run(SqliteStore(path).close())
    rng = random.Random(7)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA synchronous = OFF")
    for start in range(0, count, 50_000):
        profiles, specs = [], []
        for i in range(start, min(count, start + 50_000)):
            xp, score = rng.randrange(0, 5000), round(rng.uniform(0, 10), 3)
            agent = f"agent-{i:07d}"
            profiles.append((agent, "sim", "m", xp, "rookie", 10, xp, 0.0, score, 1.0, 1, "{}"))
            specs.append((agent, TASK_TYPES[i % 5], xp // 2, "rookie", 5, score, score, 0, 5))
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO agent_profiles (id, provider, model, xp, level, total_tasks,"
            " total_xp_earned, total_cost, average_score, success_rate, revision, profile_json)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            profiles,
        )
        conn.executemany(
            "INSERT INTO specializations (agent_id, task_type, xp, level, tasks_completed,"
            " avg_score, best_score, current_streak, tasks_judged) VALUES (?,?,?,?,?,?,?,?,?)",
            specs,
        )
        conn.execute("COMMIT")
    conn.execute("ANALYZE")
    conn.close()


def latencies_ms(fn: object, calls: int) -> list[float]:
    """Milliseconds of each of ``calls`` calls (after 20 warm-up calls)."""
    assert callable(fn)
    for _ in range(20):
        fn()
    out = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def main() -> None:
    """Populate, then time the store's leaderboard against the bare query."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "board.db"
        began = time.perf_counter()
        populate(path, PROFILES)
        size_mb = path.stat().st_size / 1e6
        print(
            f"populated {PROFILES:,} profiles in {time.perf_counter() - began:.1f} s"
            f" ({size_mb:.0f} MB)"
        )
        raw = sqlite3.connect(path)
        overall_sql = (
            "SELECT id, provider, model, xp, level, total_tasks, average_score FROM agent_profiles"
            " ORDER BY xp DESC, average_score DESC, id LIMIT 100"
        )
        typed_sql = (
            "SELECT s.agent_id, p.provider, p.model, p.xp, p.level, p.total_tasks,"
            " p.average_score, s.xp, s.level, s.tasks_judged, s.avg_score, s.best_score"
            " FROM specializations s JOIN agent_profiles p ON p.id = s.agent_id"
            " WHERE s.task_type = ? ORDER BY s.xp DESC, s.avg_score DESC, s.agent_id LIMIT 100"
        )
        base_overall = latencies_ms(lambda: raw.execute(overall_sql).fetchall(), CALLS)
        base_typed = latencies_ms(lambda: raw.execute(typed_sql, ("poetry",)).fetchall(), CALLS)
        raw.close()

        async def timed_store() -> tuple[list[float], list[float]]:
            store = SqliteStore(path)
            try:
                overall: list[float] = []
                typed: list[float] = []
                for samples, task_type in ((overall, None), (typed, "poetry")):
                    for i in range(CALLS + 20):
                        start = time.perf_counter()
                        rows = await store.leaderboard(task_type, 100)
                        if i >= 20:
                            samples.append((time.perf_counter() - start) * 1000)
                    assert len(rows) == 100
                return overall, typed
            finally:
                await store.close()

        store_overall, store_typed = asyncio.run(timed_store())
    for name, samples, base in (
        ("overall", store_overall, base_overall),
        ("task type", store_typed, base_typed),
    ):
        median = statistics.median(samples)
        base_median = statistics.median(base)
        verdict = "meets" if median <= 2.0 else "MISSES"
        print(
            f"top-100 leaderboard {name} over {PROFILES:,} profiles: median {median:.2f} ms,"
            f" p99 {percentile(samples, 99):.2f} ms ({verdict} target <= 2 ms);"
            f" bare query median {base_median:.2f} ms (store/bare {median / base_median:.1f}x)"
        )
