"""The resident memory of a fit of a large skill log, alone: the import's own state apart.

A fresh SQLite store is given ``COUNT`` judgments' skill events straight (the evidence
``bench_import``'s history gives: seed 15, a random agent of ``AGENTS``, three task types,
a score, 80% successful, every one at the import's one moment), without the Oracle's fold.
Then a process of its own opens the store and fits the whole log
(``SkillService.fit(force=True)``: the log read, the fit, its states committed): its
resident memory before the fit, its peak (``ru_maxrss``) and the fit's seconds. Target
(issue 27): the import of 1,000,000 judgments, fit included, under 300 MB.

Run: ``.venv/bin/python -m benchmarks.bench_fit_memory [COUNT AGENTS]`` (100,000 over
10,000 by default; ``1000000 10000`` for the issue's case).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from agentladder.domain.skill import AgentSkill, FleetSkill
from agentladder.services.skill.evidence import judgment_evidence
from agentladder.services.skill.service import SkillService, evidence_hash
from agentladder.store.skills import SkillCommit, SkillEvent, SkillFold
from agentladder.store.url import open_store

SEED = 15
COUNT = 100_000
AGENTS = 10_000
MOMENT = 1_764_000_000.0
TARGET_MB = 300


def _fold(event: SkillEvent) -> SkillFold:
    def fold(states: Mapping[str, AgentSkill], fleet: FleetSkill) -> SkillCommit:
        return SkillCommit(event, {}, None)

    return fold


async def write_log(path: Path, count: int, agents: int) -> None:
    """``count`` judgments' skill events in a fresh store, 10,000 to a transaction."""
    rng = random.Random(SEED)
    store = await open_store(f"sqlite:///{path}")
    try:
        for first in range(0, count, 10_000):
            items = []
            for i in range(first, min(count, first + 10_000)):
                agent = f"agent-{rng.randrange(agents)}"
                task_type = rng.choice(("sql", "code", "docs"))
                score = round(rng.uniform(0, 10), 2)
                success = rng.random() < 0.8
                e = judgment_evidence(agent, f"eval-{i}", task_type, score, success, MOMENT)
                event = SkillEvent(key=e.key, kind=e.kind, payload=e.model_dump_json(),
                                   payload_hash=evidence_hash(e), at=e.at)  # fmt: skip
                items.append((e.key, e.touched(), _fold(event)))
            await store.apply_skill_many(items)
    finally:
        await store.close()


def _resident_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / (1 << 20)


async def fit_child(path: Path) -> tuple[float, float, int]:
    """(resident MB before the fit, the fit's seconds, events fitted)."""
    store = await open_store(f"sqlite:///{path}")
    try:
        before = _resident_mb()
        start = time.perf_counter()
        report = await SkillService(store).fit(force=True)
        return before, time.perf_counter() - start, report.events
    finally:
        await store.close()


def measure(count: int, agents: int) -> None:
    """Write the log, fit it in a child process; print its memory and time."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as name:
        db = Path(name) / "fit.db"
        start = time.perf_counter()
        asyncio.run(write_log(db, count, agents))
        wrote = time.perf_counter() - start
        child = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.bench_fit_memory", "child", str(db)],
            stdout=subprocess.PIPE,
            cwd=Path(__file__).resolve().parent.parent,
        )
        assert child.stdout is not None
        output = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError("the fit failed")
        before, seconds, events = json.loads(output)
    peak = usage.ru_maxrss / 1024  # KiB on Linux
    verdict = "meets" if peak < TARGET_MB else "MISSES"
    print(
        f"fit of {events:,} judgments over {agents:,} agents (log written in {wrote:,.0f} s):"
        f" {seconds:,.0f} s; resident {before:,.0f} MB before the fit, peak {peak:,.0f} MB"
        f" ({verdict} the import's target < {TARGET_MB} MB)"
    )


def main() -> None:
    """The default size."""
    measure(COUNT, AGENTS)


if __name__ == "__main__":
    if sys.argv[1:2] == ["child"]:
        print(json.dumps(asyncio.run(fit_child(Path(sys.argv[2])))))
    elif len(sys.argv) == 3:
        measure(int(sys.argv[1]), int(sys.argv[2]))
    else:
        main()
