"""A long run of judgments at scale: does the process grow, do collector pauses grow?

On a copy of ``bench_scale``'s data (SQLite: 100,000 agents, 10,000,000 ledger lines;
NATS: 10,000 agents, 1,000,000 lines), ``SOAK_JUDGMENTS`` judgments go one at a time
through ``Oracle.submit_for_judgment`` to random agents of ALL the agents (``bench_scale``
judges a pool of 20,000 so that it can undo them). After each block of ``BLOCK``:
resident memory, the objects the garbage collector tracks (what a full collection walks),
the full collections in the block and the longest, and the judgments' p50, p99 and max.
The baseline is the first block: a store that keeps what it decodes shows memory, tracked
objects and full-collection pauses rising block after block.

Run: ``.venv/bin/python -m benchmarks soak`` (needs ``bench_scale``'s cached data, loaded
by it when missing, and room for a copy). ``AGENTLADDER_SOAK_JUDGMENTS`` sets the count;
``AGENTLADDER_SCALE_AGENTS=0`` or ``AGENTLADDER_SCALE_NATS_AGENTS=0`` skips a store.
"""

from __future__ import annotations

import asyncio
import gc
import os
import random
import shutil
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from agentladder.config import parse_settings
from agentladder.natsserver import NatsServer
from agentladder.services.container import build_services
from agentladder.services.oracle.models import JudgmentRequest
from benchmarks import bench_scale as scale
from benchmarks import scale_load as load
from benchmarks.common import percentile

SOAK_JUDGMENTS = int(os.environ.get("AGENTLADDER_SOAK_JUDGMENTS", "30000"))
BLOCK = 5000


class Collections:
    """Full (generation 2) garbage collections seen since the last ``take``: their ms."""

    def __init__(self) -> None:
        self._began = 0.0
        self._pauses: list[float] = []

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            self._began = time.perf_counter()
        else:
            self._pauses.append((time.perf_counter() - self._began) * 1000)

    def take(self) -> list[float]:
        pauses, self._pauses = self._pauses, []
        return pauses


def resident_mb() -> float:
    """VmRSS of this process, in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def soak(url: str, agents: list[str]) -> None:
    """Judge random ``agents`` on the store at ``url`` and print each block's figures."""
    services = await build_services(parse_settings(None), store_url=url)
    collections = Collections()
    gc.callbacks.append(collections)
    try:
        await services.oracle.get_leaderboard(None, 100)  # the NATS index is built
        rng = random.Random(7)
        print(f"  start: {resident_mb():.0f} MB, {len(gc.get_objects()):,} tracked objects")
        collections.take()
        for block in range(1, SOAK_JUDGMENTS // BLOCK + 1):
            times = []
            for _ in range(BLOCK):
                body = scale.judgment(rng.choice(agents), f"soak-{uuid.uuid4().hex}", rng)
                began = time.perf_counter()
                await services.oracle.submit_for_judgment(JudgmentRequest.model_validate(body))
                times.append((time.perf_counter() - began) * 1000)
            pauses = collections.take()
            longest = f"{max(pauses):.0f} ms" if pauses else "-"
            print(
                f"  after {block * BLOCK:,}: {resident_mb():.0f} MB,"
                f" {len(gc.get_objects()):,} tracked objects; {len(pauses)} full collections,"
                f" longest {longest}; judgment p50 {percentile(times, 50):.2f} ms,"
                f" p99 {percentile(times, 99):.2f} ms, max {max(times):.0f} ms"
            )
    finally:
        gc.callbacks.remove(collections)
        await services.close()


def main() -> None:
    """SQLite, then NATS, each on a copy of the cached data."""
    if scale.AGENTS:
        cached = scale.cached_sqlite(scale.AGENTS, scale.LEDGER)
        with tempfile.TemporaryDirectory(dir=scale.CACHE) as work:
            copy = Path(work) / "soak.db"
            shutil.copyfile(cached, copy)
            print(f"SQLite, {scale.AGENTS:,} agents, {SOAK_JUDGMENTS:,} judgments:")
            agents = [load.agent_name(i) for i in range(scale.AGENTS)]
            asyncio.run(soak(f"sqlite:///{copy}", agents))
    if scale.NATS_AGENTS:
        cached = scale.cached_nats(scale.NATS_AGENTS, scale.NATS_LEDGER)
        with tempfile.TemporaryDirectory(dir=scale.CACHE) as work:
            store_dir = Path(work) / "jetstream"
            shutil.copytree(cached, store_dir)
            print(f"NATS, {scale.NATS_AGENTS:,} agents, {SOAK_JUDGMENTS:,} judgments:")
            agents = [load.agent_name(i) for i in range(scale.NATS_AGENTS)]
            with NatsServer(store_dir=store_dir) as server:
                asyncio.run(soak(server.url, agents))
