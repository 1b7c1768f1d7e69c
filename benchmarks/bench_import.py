"""Judgments imported per second (``agentladder import`` of JSONL), against plain loops
measured in the same run, and the resident memory of a large import.

- SQLite: the import (``importing.run``: batches of 1,000, each one transaction for the
  Oracle events and one for the skill evidence) into a fresh file, against a plain
  sqlite3 loop inserting rows 1,000 per transaction into a fresh file with the store's
  pragmas (WAL, synchronous=FULL): (a) one row per judgment (the JSONL line), (b) as many
  rows as the import inserted (events, ledger lines, skill events, achievements). Targets
  (issue 27): at least ``SQLITE_TARGET`` judgments per second, about ratio (a) 0.05.
- NATS: the import into a NATS store against a plain nats-py loop publishing the same
  lines to a JetStream stream with 100 in flight: the ratio; target ``NATS_TARGET`` /s.
- Scale: an import of ``SCALE`` judgments over ``SCALE_AGENTS`` agents in a process of its
  own, its peak resident memory (``ru_maxrss``). Target: < 300 MB at 1,000,000 / 10,000
  (``python -m benchmarks.bench_import scale 1000000 10000``; ``make bench`` runs 100,000).

Seeded (``SEED``); medians of ``RUNS`` alternating runs. Run: ``make bench`` or
``.venv/bin/python -m benchmarks import``.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nats
from agentladder.config import parse_settings
from agentladder.importing.jsonl import read_jsonl
from agentladder.importing.run import IMPORTED, run_import
from agentladder.natsserver import NatsServer
from agentladder.services.container import build_services
from agentladder.services.oracle.models import JudgmentRequest
from benchmarks.common import report_ratio

SEED = 15
SQLITE_N = 20_000
SQLITE_AGENTS = 1_000
NATS_N = 3_000
RUNS = 3
SCALE = 100_000
SCALE_AGENTS = 10_000
IN_FLIGHT = 100
ROWS_PER_TXN = 1000
SQLITE_TARGET = 10_000
NATS_TARGET = 3_000
RATIO_TARGET = 0.05


def write_history(path: Path, count: int, agents: int, seed: int = SEED) -> Path:
    """``count`` judgments over ``agents`` agents, three task types, seeded."""
    rng = random.Random(seed)
    with path.open("w") as out:
        for i in range(count):
            line = {
                "agent_id": f"agent-{rng.randrange(agents)}", "contract_id": f"eval-{i}",
                "task_type": rng.choice(("sql", "code", "docs")),
                "score": round(rng.uniform(0, 10), 2), "success": rng.random() < 0.8,
                "duration_ms": rng.randrange(100, 60_000), "cost": round(rng.uniform(0, 0.05), 4),
                "budget": 0.04,
            }  # fmt: skip
            out.write(json.dumps(line) + "\n")
    return path


async def imported(path: Path, url: str) -> tuple[float, int]:
    """(seconds, items) of importing ``path`` into the store at ``url``."""
    services = await build_services(parse_settings(None), store_url=url)
    try:
        start = time.perf_counter()
        summary = await run_import(services.oracle, read_jsonl(path))
        seconds = time.perf_counter() - start
    finally:
        await services.close()
    if summary.imported != summary.items:
        raise RuntimeError(f"the import did not import everything: {summary}")
    return seconds, summary.items


async def one_by_one(path: Path, url: str, in_flight: int = 500) -> float:
    """Seconds to submit the lines of ``path`` one ``submit_for_judgment`` each (what
    ``POST /oracle/judgments`` does), ``in_flight`` at once: the reference without batches."""
    requests = [  # as the import takes them: history, of agents it may bring in
        item.request.model_copy(update=IMPORTED)
        for item in read_jsonl(path)
        if item.request is not None
    ]
    services = await build_services(parse_settings(None), store_url=url)
    gate = asyncio.Semaphore(in_flight)

    async def one(request: JudgmentRequest) -> None:
        async with gate:
            await services.oracle.submit_for_judgment(request)

    try:
        start = time.perf_counter()
        await asyncio.gather(*(one(r) for r in requests))
        return time.perf_counter() - start
    finally:
        await services.close()


def inserted_rows(db: Path) -> int:
    """The rows the import inserted (updated rows, e.g. profiles, not counted)."""
    conn = sqlite3.connect(db)
    try:
        tables = ("oracle_events", "xp_history", "skill_events", "achievements")
        return sum(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in tables)
    finally:
        conn.close()


def plain_sqlite(path: Path, db: Path, rows: int) -> float:
    """Seconds to insert ``rows`` rows (the lines of ``path``, cycled) 1,000 per transaction."""
    lines = path.read_text().splitlines()
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("CREATE TABLE rows (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
    start = time.perf_counter()
    for first in range(0, rows, ROWS_PER_TXN):
        conn.execute("BEGIN")
        for i in range(first, min(rows, first + ROWS_PER_TXN)):
            conn.execute("INSERT INTO rows (body) VALUES (?)", (lines[i % len(lines)],))
        conn.execute("COMMIT")
    seconds = time.perf_counter() - start
    conn.close()
    return seconds


async def plain_nats(url: str, path: Path) -> float:
    """Seconds to publish the lines of ``path`` to a fresh stream, ``IN_FLIGHT`` at once."""
    lines = [line.encode() for line in path.read_text().splitlines()]
    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        name = f"BASE{random.randrange(1 << 30)}"
        await js.add_stream(name=name, subjects=[f"{name.lower()}.>"])
        gate = asyncio.Semaphore(IN_FLIGHT)

        async def one(i: int, line: bytes) -> None:
            async with gate:
                await js.publish(f"{name.lower()}.j.{i % 1000}", line)

        start = time.perf_counter()
        await asyncio.gather(*(one(i, line) for i, line in enumerate(lines)))
        return time.perf_counter() - start
    finally:
        await nc.close()


def sqlite_runs(folder: Path) -> None:
    """The import against both plain loops, ``RUNS`` times alternating."""
    history = write_history(folder / "history.jsonl", SQLITE_N, SQLITE_AGENTS)
    ratios_a, ratios_b, rates, base_rates, rows_per, singles = [], [], [], [], [], []
    for run in range(RUNS):
        db = folder / f"import-{run}.db"
        seconds, items = asyncio.run(imported(history, f"sqlite:///{db}"))
        rows = inserted_rows(db)
        one_row = plain_sqlite(history, folder / f"plain-a-{run}.db", SQLITE_N)
        same_rows = plain_sqlite(history, folder / f"plain-b-{run}.db", rows)
        rates.append(items / seconds)
        base_rates.append(SQLITE_N / one_row)
        ratios_a.append(one_row / seconds)
        ratios_b.append(same_rows / seconds)
        rows_per.append(rows / items)
        single = asyncio.run(one_by_one(history, f"sqlite:///{folder / f'single-{run}.db'}"))
        singles.append(SQLITE_N / single)
    report_ratio(
        f"sqlite import judgments/s ({SQLITE_N:,} over {SQLITE_AGENTS:,} agents, {RUNS} runs),"
        " vs one plain row per judgment",
        statistics.median(rates), statistics.median(base_rates), "/s", RATIO_TARGET,
    )  # fmt: skip
    rate = statistics.median(rates)
    verdict = "meets" if rate >= SQLITE_TARGET else "MISSES"
    print(f"  {rate:,.0f} judgments/s: {verdict} target >= {SQLITE_TARGET:,} /s")
    print(
        f"  vs a plain loop inserting as many rows as the import did"
        f" ({statistics.median(rows_per):.2f} per judgment): ratio"
        f" {statistics.median(ratios_b):.2f}"
    )
    print(
        f"  reference: submit_for_judgment one by one, 500 in flight:"
        f" {statistics.median(singles):,.0f} /s (runs {[round(r) for r in singles]})"
    )
    print(f"  import runs {[round(r) for r in rates]}, plain runs {[round(r) for r in base_rates]}")
    print(f"  ratios (a) {[round(r, 3) for r in ratios_a]}, (b) {[round(r, 3) for r in ratios_b]}")


def nats_runs(folder: Path) -> None:
    """The import into NATS against the plain publishing loop."""
    history = write_history(folder / "nats.jsonl", NATS_N, SQLITE_AGENTS)
    rates, base_rates = [], []
    with NatsServer(store_dir=folder / "nats") as server:
        for run in range(RUNS):
            url = f"{server.url}?prefix=imp{run}&rank_bucket=ranks_imp{run}"
            seconds, items = asyncio.run(imported(history, url))
            rates.append(items / seconds)
            base_rates.append(NATS_N / asyncio.run(plain_nats(server.url, history)))
    base = statistics.median(base_rates)
    rate = statistics.median(rates)
    print(
        f"nats import judgments/s ({NATS_N:,}, {RUNS} runs): {rate:,.0f} /s vs plain nats-py"
        f" publish with {IN_FLIGHT} in flight {base:,.0f} /s: ratio {rate / base:.3f}"
        f" ({'meets' if rate >= NATS_TARGET else 'MISSES'} target >= {NATS_TARGET:,} /s)"
    )
    print(f"  import runs {[round(r) for r in rates]}, plain runs {[round(r) for r in base_rates]}")


def scale_run(folder: Path, count: int, agents: int) -> None:
    """``agentladder import`` of ``count`` judgments over ``agents`` agents, the program as
    a team runs it (its fit in a fresh image: ``cli/handoff.py``); its peak RSS, the larger
    of its two images' (Linux keeps a process's peak across ``execve``)."""
    history = write_history(folder / "scale.jsonl", count, agents)
    db = folder / "scale.db"
    child = subprocess.Popen(
        [sys.executable, "-m", "agentladder.cli", "import", str(history), "--db", str(db),
         "--json"],
        stdout=subprocess.PIPE,
        cwd=Path(__file__).resolve().parent.parent,
    )  # fmt: skip
    assert child.stdout is not None
    output = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise RuntimeError(f"the scale import failed ({child.returncode})")
    summary = json.loads(output)
    seconds, items = summary["seconds"], summary["imported"]
    rss_mb = usage.ru_maxrss / 1024  # KiB on Linux
    verdict = "meets" if rss_mb < 300 else "MISSES"
    print(
        f"scale: {items:,} judgments over {agents:,} agents in {seconds:,.0f} s"
        f" ({items / seconds:,.0f} /s, fit included); peak RSS {rss_mb:,.0f} MB"
        f" ({verdict} target < 300 MB)"
    )


def main() -> None:
    """The scale run, SQLite and NATS, in temporary folders. The scale run comes first: a
    child's peak RSS counts the parent's pages it shares between ``fork`` and ``exec``, and
    this process grows with the other runs (after them it reported 201 MB for a run whose
    own peak is 166)."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as name:
        folder = Path(name)
        scale_run(folder, SCALE, SCALE_AGENTS)
        sqlite_runs(folder)
        nats_runs(folder)


if __name__ == "__main__":
    if sys.argv[1:2] == ["scale"]:
        with tempfile.TemporaryDirectory(dir="/var/tmp") as name:
            scale_run(Path(name), int(sys.argv[2]), int(sys.argv[3]))
    else:
        main()
