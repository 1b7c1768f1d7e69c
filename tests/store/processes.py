"""Checks shared by the multi-process tests of every persistent backend."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from agentladder.domain.replay import ReplayStep, replay
from agentladder.store.base import Store
from tests.store.builders import RULES

ROOT = Path(__file__).resolve().parents[2]


def start_worker(url: str, agent: str, prefix: str, count: int) -> subprocess.Popen[str]:
    """Start ``award_worker`` as its own OS process."""
    return subprocess.Popen(
        [sys.executable, "-m", "tests.store.award_worker", url, agent, prefix, str(count)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def acked(output: str) -> list[str]:
    """The contract ids a worker reported as acknowledged."""
    return [line[4:] for line in output.splitlines() if line.startswith("ACK ")]


async def assert_consistent(store: Store, agent: str) -> int:
    """Stored profile == replay of its events; ledger == replayed lines. Returns event count."""
    events = await store.events(agent)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    rebuilt, lines = replay(agent, [ReplayStep(e.kind, e.payload, e.at) for e in events], RULES)
    stored = await store.get_profile(agent)
    assert stored is not None
    assert stored.value == rebuilt
    ledger = await store.ledger(agent, limit=1_000_000)
    assert [(e.event, e.xp_awarded) for e in ledger] == [(ln.event, ln.xp) for ln in lines]
    assert stored.value.stats.total_tasks == len(events)
    return len(events)
