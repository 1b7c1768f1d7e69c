"""A batch of judgments on SQLite reads with a few statements, however many judgments and
agents it holds: profiles, stored keys and skill keys are read with ``IN`` lists, not one
query per judgment, and the rows written one ``executemany`` per table
(``store/sqlite/many.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentladder.importing.jsonl import read_jsonl
from agentladder.importing.run import run_import
from agentladder.services.oracle.verify import verify_store
from tests.importing.helpers import run_with_services

AGENTS = 60


def _history(path: Path, first: int, count: int) -> Path:
    with path.open("w") as out:
        for i in range(first, first + count):
            line = {"agent_id": f"agent-{i % AGENTS}", "contract_id": f"c-{i}",
                    "task_type": ("sql", "code")[i % 2], "score": (i * 7) % 11}  # fmt: skip
            out.write(json.dumps(line) + "\n")
    return path


def test_a_batch_of_known_agents_reads_with_a_few_statements(tmp_path: Path) -> None:
    """1,000 new judgments of 60 agents already stored: under 40 SELECTs on the writer's
    connection for the whole batch (none per judgment), and the store verifies."""
    before = _history(tmp_path / "before.jsonl", 0, 500)
    batch = _history(tmp_path / "batch.jsonl", 500, 1000)
    statements: list[str] = []

    async def body(services: Any) -> tuple[Any, ...]:
        await run_import(services.oracle, read_jsonl(before))
        conn = services.store._write_conn  # the writer's connection: every write's SQL
        conn.set_trace_callback(statements.append)
        try:
            summary = await run_import(services.oracle, read_jsonl(batch))
        finally:
            conn.set_trace_callback(None)
        return summary, await verify_store(services.store, services.settings.oracle)

    summary, report = run_with_services(f"sqlite:///{tmp_path / 'a.db'}", body)
    assert (summary.imported, summary.duplicate) == (1000, 0)
    assert report.ok
    reads = [
        s for s in statements if s.startswith("SELECT") and "FROM oracle_events WHERE" not in s
    ]
    assert 0 < len(reads) < 40, len(reads)
