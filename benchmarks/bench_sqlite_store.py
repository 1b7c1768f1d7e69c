"""Awards per second through the SQLite store against a plain sqlite3 loop, same file settings.

A store award is one ``commit_oracle``: the event, its ledger lines and the profile (with
its specializations and achievements rows) in one BEGIN IMMEDIATE transaction, on the
store's writer thread. The judgments are folded with the rules before the clock starts
(folding is the Oracle's cost, measured by the Oracle's own benchmark); a second line
shows the whole read-fold-commit cycle for reference. The baseline is a plain sqlite3
loop doing one upsert and one insert per transaction. All run in this process on fresh
files in WAL mode with the same ``synchronous`` setting; figures are medians of several
runs. Target: store / baseline >= 0.5.

Run: ``make bench`` or ``.venv/bin/python -m benchmarks sqlite_store``.
"""

from __future__ import annotations

import asyncio
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

from agentladder.store.records import OracleCommit
from agentladder.store.sqlite.store import SqliteStore
from benchmarks.common import median_rate, report_ratio
from tests.store.builders import award, judgment, judgment_commit

AWARDS = 1600
WRITERS = 16
RUNS = 5


def baseline(path: Path, synchronous: str, count: int) -> int:
    """``count`` transactions of one upsert and one insert with plain sqlite3."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(f"PRAGMA synchronous = {synchronous}")
    conn.execute("CREATE TABLE IF NOT EXISTS p (id TEXT PRIMARY KEY, xp INTEGER, tasks INTEGER)")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS h (id INTEGER PRIMARY KEY AUTOINCREMENT,"
        " agent_id TEXT, event TEXT, xp INTEGER, contract_id TEXT)"
    )
    for i in range(count):
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(
            "INSERT INTO p (id, xp, tasks) VALUES (?, ?, 1) ON CONFLICT (id) DO UPDATE"
            " SET xp = xp + excluded.xp, tasks = tasks + 1",
            (f"agent-{i % 10}", 35),
        )
        conn.execute(
            "INSERT INTO h (agent_id, event, xp, contract_id) VALUES (?,?,?,?)",
            (f"agent-{i % 10}", "task_completed", 35, f"c-{i}"),
        )
        conn.execute("COMMIT")
    conn.close()
    return count


def folded(count: int, agent_id: str = "agent-0") -> list[OracleCommit]:
    """``count`` commits of one agent's successive judgments, folded in advance."""
    commits: list[OracleCommit] = []
    for i in range(count):
        previous = commits[-1].profile if commits else None
        item = judgment(agent_id, f"c-{i}", task_type=f"t{i % 3}")
        commits.append(judgment_commit(previous, item))
    return commits


def commits_concurrently(path: Path, synchronous: str, chains: list[list[OracleCommit]]) -> int:
    """Commit each agent's chain in order, all chains at once (one task per agent)."""

    async def run() -> None:
        store = SqliteStore(path, synchronous=synchronous)

        async def chain(commits: list[OracleCommit]) -> None:
            for revision, commit in enumerate(commits):
                await store.commit_oracle(commit, revision)

        try:
            await asyncio.gather(*(chain(c) for c in chains))
        finally:
            await store.close()

    asyncio.run(run())
    return sum(len(c) for c in chains)


def commits_only(path: Path, synchronous: str, commits: list[OracleCommit]) -> int:
    """Commit pre-folded ``commits`` in order through ``SqliteStore``."""

    async def run() -> None:
        store = SqliteStore(path, synchronous=synchronous)
        try:
            for revision, commit in enumerate(commits):
                await store.commit_oracle(commit, revision)
        finally:
            await store.close()

    asyncio.run(run())
    return len(commits)


def through_store(path: Path, synchronous: str, count: int) -> int:
    """``count`` read-fold-commit awards through ``SqliteStore`` over 10 agents."""

    async def run() -> None:
        store = SqliteStore(path, synchronous=synchronous)
        try:
            for i in range(count):
                await award(store, judgment(f"agent-{i % 10}", f"c-{i}", task_type=f"t{i % 3}"))
        finally:
            await store.close()

    asyncio.run(run())
    return count


def main() -> None:
    """Print the store's rate, its baseline and their ratio, for synchronous NORMAL and FULL."""
    for synchronous, count in (("normal", AWARDS), ("full", AWARDS // 3)):
        commits = folded(count)
        with tempfile.TemporaryDirectory() as folder:
            names = iter(range(1000))

            def fresh(kind: str, folder: str = folder, names: Iterator[int] = names) -> Path:
                return Path(folder) / f"{kind}-{next(names)}.db"

            chains = [folded(count // WRITERS, f"agent-{w}") for w in range(WRITERS)]

            def base_run(s: str = synchronous, n: int = count) -> int:
                return baseline(fresh("base"), s, n)

            def store_run(s: str = synchronous, c: list[OracleCommit] = commits) -> int:
                return commits_only(fresh("store"), s, c)

            def group_run(s: str = synchronous, c: list[list[OracleCommit]] = chains) -> int:
                return commits_concurrently(fresh("group"), s, c)

            def cycle_run(s: str = synchronous, n: int = count) -> int:
                return through_store(fresh("cycle"), s, n)

            base_rate, base_all = median_rate(base_run, RUNS)
            store_rate, store_all = median_rate(store_run, RUNS)
            group_rate, _ = median_rate(group_run, RUNS)
            cycle_rate, _ = median_rate(cycle_run, RUNS)
        report_ratio(
            f"sqlite commit_oracle/s (synchronous={synchronous}, {count} awards x {RUNS} runs)",
            store_rate, base_rate, "awards/s", 0.5,
        )  # fmt: skip
        print(f"  store runs {[round(r) for r in store_all]}")
        print(f"  baseline runs {[round(r) for r in base_all]}")
        report_ratio(
            f"  the same with {WRITERS} agents committing at once (group commit)",
            group_rate, base_rate, "awards/s", 0.5,
        )  # fmt: skip
        print(f"  read-fold-commit cycle (reference): {cycle_rate:,.0f} awards/s")
