"""Writes per second on the NATS store against a plain nats-py KV loop, same server, same run.

Baseline: ``kv.get(key)`` then ``kv.update(key, value, last=revision)`` on a KV bucket, the
plainest compare-and-set there is. Against it, through ``NatsStore``, one agent at a time:
- rank stats: ``get_stats`` + ``commit_stats`` of one agent (a one-message atomic batch);
- awards: ``get_profile`` + ``commit_oracle`` of a pre-folded judgment;
- awards through ``apply_oracle``, the Oracle's write (fold from the head this process
  knows, compare-and-set, claims as in ``docs/storage-nats.md``).
One nats-server with JetStream on this machine's disk (a temporary folder), medians of
several runs. Target: awards / baseline >= 0.5.

Run: ``make bench`` or ``.venv/bin/python -m benchmarks nats_store``.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
import uuid
from functools import partial

import nats
from agentladder.domain.profile import AgentProfile
from agentladder.domain.stats import AgentPerformanceStats, record_submission
from agentladder.natsserver import NatsServer
from agentladder.store.nats.store import NatsStore
from agentladder.store.records import OracleCommit
from agentladder.store.url import open_store
from benchmarks.bench_sqlite_store import folded
from benchmarks.common import report_ratio

OPS = 300
RUNS = 5


def _given(commit: OracleCommit, _profile: AgentProfile | None) -> OracleCommit:
    """A fold that ignores the profile and returns the commit folded in advance."""
    return commit


async def baseline(url: str, count: int) -> float:
    """Rate of get + update(last=revision) on one key of a fresh KV bucket."""
    nc = await nats.connect(url)
    try:
        kv = await nc.jetstream().create_key_value(bucket=f"base_{uuid.uuid4().hex[:8]}")
        value = AgentPerformanceStats().model_dump_json().encode()
        await kv.put("agent-0", value)
        start = time.perf_counter()
        for _ in range(count):
            entry = await kv.get("agent-0")
            await kv.update("agent-0", value, last=entry.revision)
        return count / (time.perf_counter() - start)
    finally:
        await nc.close()


async def rank_writes(url: str, count: int) -> float:
    """Rate of read + compare-and-set of one agent's stats through the store."""
    store = await open_store(
        f"{url}?prefix=b{uuid.uuid4().hex[:8]}&rank_bucket=r{uuid.uuid4().hex[:8]}"
    )
    try:
        start = time.perf_counter()
        for _ in range(count):
            current = await store.get_stats("agent-0")
            stats = current.value if current else AgentPerformanceStats()
            revision = current.revision if current else 0
            new = record_submission(stats, latency_ms=10.0, ok=True)
            await store.commit_stats({"agent-0": (new, revision)})
        return count / (time.perf_counter() - start)
    finally:
        await store.close()


async def awards(url: str, count: int) -> float:
    """Rate of get_profile + commit_oracle of pre-folded judgments through the store."""
    commits = folded(count)
    store = await open_store(
        f"{url}?prefix=a{uuid.uuid4().hex[:8]}&rank_bucket=r{uuid.uuid4().hex[:8]}"
    )
    assert isinstance(store, NatsStore)
    try:
        start = time.perf_counter()
        for commit in commits:
            current = await store.get_profile("agent-0")
            await store.commit_oracle(commit, 0 if current is None else current.revision)
        return count / (time.perf_counter() - start)
    finally:
        await store.close()


async def applied(url: str, count: int) -> float:
    """Rate of ``apply_oracle`` (what the Oracle calls) with pre-folded judgments."""
    commits = folded(count)
    store = await open_store(
        f"{url}?prefix=p{uuid.uuid4().hex[:8]}&rank_bucket=r{uuid.uuid4().hex[:8]}"
    )
    try:
        start = time.perf_counter()
        for commit in commits:
            await store.apply_oracle("agent-0", commit.event.key, partial(_given, commit))
        return count / (time.perf_counter() - start)
    finally:
        await store.close()


def main() -> None:
    """Run all three, alternating, on one server; print medians and ratios."""
    with (
        tempfile.TemporaryDirectory(dir="/var/tmp") as folder,
        NatsServer(store_dir=folder) as server,
    ):
        rates: dict[str, list[float]] = {"baseline": [], "ranks": [], "awards": [], "apply": []}
        for _ in range(RUNS):
            rates["baseline"].append(asyncio.run(baseline(server.url, OPS)))
            rates["ranks"].append(asyncio.run(rank_writes(server.url, OPS)))
            rates["awards"].append(asyncio.run(awards(server.url, OPS)))
            rates["apply"].append(asyncio.run(applied(server.url, OPS)))
    base = statistics.median(rates["baseline"])
    report_ratio(
        f"nats awards through apply_oracle/s, the Oracle's write ({OPS} x {RUNS} runs)",
        statistics.median(rates["apply"]),
        base,
        "ops/s",
        0.5,
    )
    report_ratio("nats rank stats writes/s", statistics.median(rates["ranks"]), base, "ops/s", 0.5)
    committed = statistics.median(rates["awards"])
    print(
        f"  reference: awards as get_profile + commit_oracle (pre-folded) {committed:,.0f} ops/s,"
        f" ratio {committed / base:.2f}"
    )
    for name, values in rates.items():
        print(f"  {name} runs {[round(v) for v in values]}")
