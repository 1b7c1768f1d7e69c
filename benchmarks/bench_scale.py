"""Scale: 100,000 agents and 10,000,000 ledger lines on SQLite, 10,000 agents on NATS.

Loads the data once (``benchmarks/scale_load.py``: histories judged for real through the
Oracle, stamped onto every agent and bulk-inserted; kept under ``.bench-cache/`` keyed
by the counts and the schema version), then measures in-process, through the services
``build_services`` makes and the app of ``create_app`` (httpx ASGI transport):

- the top-100 leaderboard, overall and per task type (``Oracle.get_leaderboard``), against
  the same ORDER BY ... LIMIT 100 on a plain sqlite3 connection (NATS: against the one
  plain message get the query makes);
- ``GET /agents/directory?tag=sql``, against plain sqlite3 reading the same rows and
  filtering them in Python;
- a judgment (``Oracle.submit_for_judgment``) to a random existing agent, against a plain
  sqlite3 upsert + insert per transaction (NATS: a plain KV get + update);
- the resident memory of a real ``agentladder serve`` on the loaded data, after it served
  leaderboards, judgments and the directory (VmRSS and VmHWM of /proc/<pid>/status);
- the database's size on disk.

Medians over several runs of each run's p50 and p99. Targets: leaderboard and judgment
p99 under 5 ms in-process, memory under 500 MB. The judgments are undone after the run,
so the cached file keeps the loaded data.

Run: ``make bench`` or ``.venv/bin/python -m benchmarks scale``. Smaller runs:
``AGENTLADDER_SCALE_AGENTS``, ``AGENTLADDER_SCALE_LEDGER`` (SQLite; 0 agents: no SQLite),
``AGENTLADDER_SCALE_NATS_AGENTS``, ``AGENTLADDER_SCALE_NATS_LEDGER`` (0 agents: no NATS),
``AGENTLADDER_SCALE_RUNS``.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import sqlite3
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

import nats
from agentladder.api.app import create_app
from agentladder.config import parse_settings
from agentladder.natsserver import NatsServer
from agentladder.services.container import Services, build_services
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.store.nats.config import parse_nats_url
from agentladder.store.sqlite.schema import MIGRATIONS
from benchmarks import scale_load as load
from benchmarks.common import percentile
from benchmarks.scale_nats import load_nats
from benchmarks.scale_serve import Memory, served_memory

AGENTS = int(os.environ.get("AGENTLADDER_SCALE_AGENTS", "100000"))
LEDGER = int(os.environ.get("AGENTLADDER_SCALE_LEDGER", "10000000"))
NATS_AGENTS = int(os.environ.get("AGENTLADDER_SCALE_NATS_AGENTS", "10000"))
NATS_LEDGER = int(os.environ.get("AGENTLADDER_SCALE_NATS_LEDGER", "1000000"))
RUNS = int(os.environ.get("AGENTLADDER_SCALE_RUNS", "5"))
TEMPLATES = 2000
BOARD_CALLS = 1000
JUDGMENTS = 2000
HTTP_CALLS = 200
DIRECTORY_CALLS = 2
JUDGED = 20_000
"""Judgments go to random agents of a random pool of this many (their rows are restored)."""
TARGET_MS = 5.0
TARGET_MB = 500.0
CACHE = Path(__file__).resolve().parent.parent / ".bench-cache"

Samples = dict[str, list[float]]  # figure -> milliseconds of each call, one run


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


async def timed_async(fn: Callable[[int], Awaitable[object]], calls: int) -> list[float]:
    """Milliseconds of each of ``calls`` awaited calls ``fn(i)``, after 10 warm-up calls."""
    for i in range(min(10, calls)):
        await fn(-1 - i)
    out = []
    for i in range(calls):
        start = time.perf_counter()
        await fn(i)
        out.append(_ms(start))
    return out


def timed_sync(fn: Callable[[int], object], calls: int) -> list[float]:
    """Milliseconds of each of ``calls`` calls ``fn(i)``, after 10 warm-up calls."""
    for i in range(min(10, calls)):
        fn(-1 - i)
    out = []
    for i in range(calls):
        start = time.perf_counter()
        fn(i)
        out.append(_ms(start))
    return out


def judgment(agent: str, contract: str, rng: random.Random) -> dict[str, Any]:
    """One judged task, as the orchestrator reports it."""
    return {
        "agent_id": agent, "contract_id": contract, "task_type": rng.choice(load.TASK_TYPES),
        "score": round(rng.uniform(5, 10), 1), "success": rng.random() < 0.93,
        "duration_ms": 20_000.0, "time_limit_ms": 60_000.0, "cost": 0.01, "budget": 0.05,
    }  # fmt: skip


async def measure(services: Services, agents: list[str], run: int, board: bool) -> Samples:
    """One run of every in-process figure on ``services`` (judgments to ``agents``)."""
    rng = random.Random(run)
    oracle = services.oracle
    types = load.TASK_TYPES
    transport = httpx.ASGITransport(app=create_app(services), client=("127.0.0.1", 5000))
    out: Samples = {}
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:

        async def http_board(i: int) -> None:
            response = await client.get("/oracle/leaderboard", params={"limit": 100})
            assert response.status_code == 200
            assert len(response.json()["entries"]) == 100

        async def directory(i: int) -> None:
            response = await client.get("/agents/directory", params={"tag": "sql"})
            assert response.status_code == 200
            assert response.json()["agents"]

        async def judge(i: int) -> None:
            body = judgment(rng.choice(agents), f"bench-{uuid.uuid4().hex}", rng)
            await oracle.submit_for_judgment(JudgmentRequest.model_validate(body))

        async def http_judge(i: int) -> None:
            body = judgment(rng.choice(agents), f"bench-{uuid.uuid4().hex}", rng)
            response = await client.post("/oracle/judgments", json=body)
            assert response.status_code == 200, response.text

        if board:
            out["leaderboard overall"] = await timed_async(
                lambda i: oracle.get_leaderboard(None, 100), BOARD_CALLS
            )
            out["leaderboard per task type"] = await timed_async(
                lambda i: oracle.get_leaderboard(types[i % len(types)], 100), BOARD_CALLS
            )
            out["leaderboard, GET /oracle/leaderboard"] = await timed_async(http_board, HTTP_CALLS)
        out["judgment"] = await timed_async(judge, JUDGMENTS)
        out["judgment, POST /oracle/judgments"] = await timed_async(http_judge, HTTP_CALLS)
        out["GET /agents/directory?tag=sql"] = await timed_async(directory, DIRECTORY_CALLS)
    return out


def sqlite_baselines(path: Path, folder: Path) -> Samples:
    """The plain sqlite3 queries and writes the store's figures are compared with."""
    raw = sqlite3.connect(path)
    overall = (
        "SELECT id, provider, model, xp, level, total_tasks, average_score FROM agent_profiles"
        " ORDER BY xp DESC, average_score DESC, id LIMIT 100"
    )
    typed = (
        "SELECT s.agent_id, p.provider, p.model, p.xp, p.level, p.total_tasks,"
        " p.average_score, s.xp, s.level, s.tasks_judged, s.avg_score, s.best_score"
        " FROM specializations s JOIN agent_profiles p ON p.id = s.agent_id"
        " WHERE s.task_type = ? ORDER BY s.xp DESC, s.avg_score DESC, s.agent_id LIMIT 100"
    )
    types = load.TASK_TYPES

    def directory(i: int) -> None:
        rows = raw.execute(
            "SELECT r.doc, s.stats_json FROM registrations r"
            " LEFT JOIN rank_stats s ON s.agent_id = r.agent_id ORDER BY r.agent_id"
        )
        found = []
        for doc, stats in rows:
            registration = json.loads(doc)
            if "sql" in registration["config"]["capability_tags"]:
                found.append({**registration, "stats": json.loads(stats)})
        json.dumps({"agents": found})

    out = {
        "leaderboard overall": timed_sync(lambda i: raw.execute(overall).fetchall(), BOARD_CALLS),
        "leaderboard per task type": timed_sync(
            lambda i: raw.execute(typed, (types[i % len(types)],)).fetchall(), BOARD_CALLS
        ),
        "GET /agents/directory?tag=sql": timed_sync(directory, DIRECTORY_CALLS),
    }
    raw.close()
    base = sqlite3.connect(folder / "baseline.db", isolation_level=None)
    base.execute("PRAGMA journal_mode = WAL")
    base.execute("PRAGMA synchronous = FULL")  # the store's default
    base.execute("CREATE TABLE IF NOT EXISTS p (id TEXT PRIMARY KEY, xp INTEGER, tasks INTEGER)")
    base.execute(
        "CREATE TABLE IF NOT EXISTS h (id INTEGER PRIMARY KEY AUTOINCREMENT,"
        " agent_id TEXT, event TEXT, xp INTEGER, contract_id TEXT)"
    )

    def write(i: int) -> None:
        agent = f"agent-{random.randrange(AGENTS):06d}"
        base.execute("BEGIN IMMEDIATE")
        base.execute(
            "INSERT INTO p (id, xp, tasks) VALUES (?, ?, 1) ON CONFLICT (id) DO UPDATE"
            " SET xp = xp + excluded.xp, tasks = tasks + 1",
            (agent, 35),
        )
        base.execute(
            "INSERT INTO h (agent_id, event, xp, contract_id) VALUES (?,?,?,?)",
            (agent, "task_completed", 35, uuid.uuid4().hex),
        )
        base.execute("COMMIT")

    out["judgment"] = timed_sync(write, JUDGMENTS)
    base.close()
    return out


async def nats_baselines(url: str) -> Samples:
    """The plain nats-py reads and writes the NATS store's figures are compared with."""
    options = parse_nats_url(url)
    nc = await nats.connect(list(options.servers))
    try:
        js = nc.jetstream()
        kv = await js.create_key_value(bucket=f"base_{uuid.uuid4().hex[:8]}")
        await kv.put("agent-0", b"{}")

        async def last_event(i: int) -> None:
            await js.get_msg(options.oracle_stream, subject=f"{options.event_prefix}>")

        async def update(i: int) -> None:
            entry = await kv.get("agent-0")
            await kv.update("agent-0", b'{"xp": 35}', last=entry.revision)

        board = await timed_async(last_event, BOARD_CALLS)
        out = {"leaderboard overall": board, "leaderboard per task type": board}
        out["judgment"] = await timed_async(update, JUDGMENTS)
        await js.delete_key_value(kv._name)
        return out
    finally:
        await nc.close()


def cached_sqlite(agents: int, lines: int) -> Path:
    """The loaded SQLite file for these counts, loaded now when not cached."""
    schema = max(version for version, _, _ in MIGRATIONS)
    path = CACHE / f"sqlite-a{agents}-l{lines}-schema{schema}-load{load.LOADER_VERSION}.db"
    dirty = path.with_name(path.name + ".in-use")
    if path.exists() and not dirty.exists():
        return path
    for stale in CACHE.glob(path.name + "*"):
        stale.unlink()
    CACHE.mkdir(exist_ok=True)
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=CACHE) as folder:
        templates = load.build_templates(Path(folder), min(TEMPLATES, agents), lines / agents)
        chosen = load.assign(templates, agents, lines)
        part = Path(folder) / "loading.db"
        load.load_sqlite(part, templates, chosen)
        part.rename(path)
    print(
        f"loaded {agents:,} agents, {lines:,} ledger lines in {time.perf_counter() - began:.0f} s"
    )
    return path


def cached_nats(agents: int, lines: int) -> Path:
    """The loaded JetStream folder for these counts, loaded now when not cached."""
    folder = CACHE / f"nats-a{agents}-l{lines}-load{load.LOADER_VERSION}"
    if folder.exists():
        return folder
    CACHE.mkdir(exist_ok=True)
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=CACHE) as work:
        templates = load.build_templates(
            Path(work), min(TEMPLATES, agents), lines / agents, with_records=True
        )
        chosen = load.assign(templates, agents, lines)
        store_dir = Path(work) / "jetstream"
        with NatsServer(store_dir=store_dir) as server:
            asyncio.run(load_nats(server.url, templates, chosen))
        store_dir.rename(folder)
    print(
        f"loaded {agents:,} agents, {lines:,} ledger lines in {time.perf_counter() - began:.0f} s"
    )
    return folder


def size_mb(path: Path) -> float:
    """Megabytes of a file with its -wal, or of a folder."""
    if path.is_dir():
        return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6
    wal = path.with_name(path.name + "-wal")
    return (path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)) / 1e6


def summarize(title: str, runs: list[Samples], bases: list[Samples], memory: Memory) -> None:
    """Print medians over runs of p50 and p99, the baselines, ratios and verdicts."""
    print(f"-- {title}: medians of {len(runs)} runs")
    for name in runs[0]:
        p50 = statistics.median(statistics.median(r[name]) for r in runs)
        p99 = statistics.median(percentile(r[name], 99) for r in runs)
        line = f"{name}: p50 {p50:.2f} ms, p99 {p99:.2f} ms"
        if name in bases[0]:
            b50 = statistics.median(statistics.median(b[name]) for b in bases)
            b99 = statistics.median(percentile(b[name], 99) for b in bases)
            line += (
                f"; baseline p50 {b50:.2f} ms, p99 {b99:.2f} ms; store/baseline {p50 / b50:.1f}x"
            )
        if name in ("leaderboard overall", "leaderboard per task type", "judgment"):
            line += f"; target p99 < {TARGET_MS:g} ms: {'met' if p99 < TARGET_MS else 'missed'}"
        print(line)
    for label, value in memory.items():
        print(f"serve RSS {label}: {value:.0f} MB")
    verdict = "met" if memory["peak (VmHWM)"] < TARGET_MB else "missed"
    print(f"serve peak RSS target < {TARGET_MB:g} MB: {verdict}")


def sqlite_part() -> None:
    """100,000 agents and 10,000,000 ledger lines on SQLite."""
    path = cached_sqlite(AGENTS, LEDGER)
    print(f"database {path.name}: {size_mb(path):,.0f} MB (file + wal)")
    conn = sqlite3.connect(path)
    lines = conn.execute("SELECT max(rowid) FROM xp_history").fetchone()[0]
    conn.close()
    pool = random.Random(2).sample(range(AGENTS), min(AGENTS, JUDGED))
    agents = [load.agent_name(i) for i in pool]
    rows, counters = load.snapshot(path, agents)  # to undo the judgments afterwards
    dirty = path.with_name(path.name + ".in-use")
    dirty.touch()

    async def in_process(run: int) -> Samples:
        services = await build_services(parse_settings(None), store_url=f"sqlite:///{path}")
        try:
            if run == 0:
                report = await load.check_sample(services.store, AGENTS)
                print(
                    f"oracle verify on {report.agents_checked} agents: {report.differences or 'ok'}"
                )
            return await measure(services, agents, run, board=True)
        finally:
            await services.close()

    runs, bases = [], []
    for run in range(RUNS):
        runs.append(asyncio.run(in_process(run)))
        bases.append(sqlite_baselines(path, CACHE))
    memory = served_memory(f"sqlite:///{path}", agents, CACHE)
    print(f"after the runs: {size_mb(path):,.0f} MB (file + wal), {lines:,} ledger lines loaded")
    load.restore(path, rows, counters)
    dirty.unlink()
    (CACHE / "baseline.db").unlink(missing_ok=True)
    summarize(f"SQLite, {AGENTS:,} agents, {LEDGER:,} ledger lines", runs, bases, memory)


def nats_part() -> None:
    """10,000 agents on NATS."""
    cached = cached_nats(NATS_AGENTS, NATS_LEDGER)
    print(f"JetStream folder {cached.name}: {size_mb(cached):,.0f} MB")
    agents = [load.agent_name(i) for i in range(NATS_AGENTS)]
    with tempfile.TemporaryDirectory(dir=CACHE) as work:
        store_dir = Path(work) / "jetstream"
        shutil.copytree(cached, store_dir)  # the runs' judgments stay out of the cache
        with NatsServer(store_dir=store_dir) as server:

            async def in_process(run: int) -> tuple[Samples, Samples]:
                began = time.perf_counter()
                services = await build_services(parse_settings(None), store_url=server.url)
                try:
                    await services.oracle.get_leaderboard(None, 100)
                    if run == 0:
                        print(f"store opened, index built in {_ms(began) / 1000:.1f} s")
                        report = await load.check_sample(services.store, NATS_AGENTS)
                        verdict = report.differences or "ok"
                        print(f"oracle verify on {report.agents_checked} agents: {verdict}")
                    return await measure(services, agents, run, True), await nats_baselines(
                        server.url
                    )
                finally:
                    await services.close()

            results = [asyncio.run(in_process(run)) for run in range(RUNS)]
            memory = served_memory(server.url, agents, Path(work))
    summarize(
        f"NATS, {NATS_AGENTS:,} agents, {NATS_LEDGER:,} ledger lines",
        [r for r, _ in results],
        [b for _, b in results],
        memory,
    )


def main() -> None:
    """Load (or reuse) the data, measure SQLite, then NATS."""
    if AGENTS:
        sqlite_part()
    if NATS_AGENTS:
        nats_part()
