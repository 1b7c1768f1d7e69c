"""`agentladder export` holds one page at a time: exporting 20,000 judgments (and their
ledger; 40 pages of 500 events) peaks far below what reading them all at once takes, and
about where 2,000 do."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from agentladder.importing.jsonl import read_jsonl
from agentladder.importing.run import run_import
from agentladder.services.container import Services
from tests.importing.helpers import run_with_services

ROOT = Path(__file__).resolve().parents[2]
MB = 1 << 20
BOUND = 16 * MB
"""The most an export of any size may add: a few pages of events and their JSON."""


def _store(folder: Path, judgments: int) -> str:
    """A SQLite store of ``judgments`` judgments of 20 agents, made by an import (without
    the skill model's evidence and fit, which an export of judgments does not read)."""
    path = folder / "history.jsonl"
    with path.open("w") as out:
        for i in range(judgments):
            line = {"agent_id": f"agent-{i % 20}", "contract_id": f"c-{i}",
                    "task_type": ("sql", "code", "audit")[i % 3], "score": (i * 7) % 11,
                    "cost": 0.002, "budget": 0.01}  # fmt: skip
            out.write(json.dumps(line) + "\n")
    url = f"sqlite:///{folder / 'big.db'}"

    async def body(services: Services) -> None:
        services.oracle.skill = None
        summary = await run_import(services.oracle, read_jsonl(path))
        assert summary.imported == judgments

    run_with_services(url, body)
    return url


def _peaks(url: str, kind: str, out: Path, *, load_all: bool = False) -> dict[str, int]:
    """The probe's peaks of exporting ``kind`` of ``url`` (and of reading all at once)."""
    probe = [sys.executable, "-m", "tests.exporting.memory_probe", url, kind, str(out)]
    probe += ["--load-all"] if load_all else []
    done = subprocess.run(probe, check=False, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    peaks: dict[str, int] = json.loads(done.stdout)
    return peaks


def test_an_export_of_20000_judgments_holds_a_page_at_a_time(tmp_path: Path) -> None:
    """Judgments and ledger: peak under 16 MB with 20,000 judgments (reading every event at
    once takes more), and at most 2 MB more than with 2,000. Everything read at once is
    measured once per store (it is the same for both kinds), in the judgments' probe."""
    (tmp_path / "small").mkdir()
    (tmp_path / "large").mkdir()
    small = _store(tmp_path / "small", 2_000)
    large = _store(tmp_path / "large", 20_000)
    for kind in ("judgments", "ledger"):
        first = kind == "judgments"
        few = _peaks(small, kind, tmp_path / f"{kind}-2k.jsonl", load_all=first)
        many = _peaks(large, kind, tmp_path / f"{kind}-20k.jsonl", load_all=first)
        print(kind, few, many)  # the figures of docs/benchmarks.md, "Export"
        assert many["items"] >= 20_000
        assert many["export"] < BOUND
        if first:
            assert many["events"] == 20_000
            assert many["load_all"] > BOUND
        assert many["export"] - few["export"] < 2 * MB
