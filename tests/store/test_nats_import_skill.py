"""NATS: the skill evidence of the Oracle events a batch created is written without
looking its keys up first (an event created now cannot have had its evidence applied
before); a key that a repeat applied meanwhile refuses the chunk, which is retried with
every key looked up, the first evidence kept."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from agentladder.config import parse_settings
from agentladder.importing.jsonl import read_jsonl
from agentladder.importing.run import run_import
from agentladder.services.container import build_services
from agentladder.services.oracle.verify import verify_store
from agentladder.services.skill.evidence import judgment_evidence
from tests.store.test_nats_heads import counting_reads


def _lines(path: Path, contracts: list[str]) -> Path:
    rows = [
        {"agent_id": "a", "contract_id": c, "task_type": "sql", "score": 7.0} for c in contracts
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_new_evidence_is_written_without_looking_it_up(nats_store_url: str, tmp_path: Path) -> None:
    """200 new judgments imported: no read of a skill event's key (one per judgment
    before), every evidence stored once, no conflict, verify passes."""
    path = _lines(tmp_path / "h.jsonl", [f"c-{i}" for i in range(200)])

    async def main() -> tuple[Any, ...]:
        services = await build_services(parse_settings(None), store_url=nats_store_url)
        try:
            store = services.store.wrapped  # type: ignore[attr-defined]
            reads = counting_reads(store._js)
            summary = await run_import(services.oracle, read_jsonl(path), fit=False)
            looked = [s for s in reads if "_skills.e." in s]
            events = await services.store.skill_events(after=0, limit=500)
            report = await verify_store(services.store, services.settings.oracle)
            return summary, looked, events, store.conflicts.conflicts["skill"], report
        finally:
            await services.close()

    summary, looked, events, conflicts, report = asyncio.run(main())
    assert summary.imported == 200
    assert looked == []
    assert sorted(e.key for e in events) == sorted(f"judgment:a:c-{i}" for i in range(200))
    assert conflicts == 0
    assert report.ok, report


def test_evidence_a_repeat_applied_meanwhile_is_kept(nats_store_url: str, tmp_path: Path) -> None:
    """The evidence of c-1 is in the log before its Oracle event is created (as a repeat
    racing the import would leave it): the chunk is refused once, retried with its keys
    looked up, and c-1's first evidence stays (its time, not the import's)."""
    path = _lines(tmp_path / "h.jsonl", ["c-0", "c-1", "c-2"])

    async def main() -> tuple[Any, ...]:
        services = await build_services(parse_settings(None), store_url=nats_store_url)
        try:
            assert services.skill is not None
            first = judgment_evidence("a", "c-1", "sql", 7.0, True, 1_000.0, deferred=True)
            await services.skill.observe(first)
            summary = await run_import(services.oracle, read_jsonl(path), fit=False)
            events = await services.store.skill_events(after=0, limit=10)
            store = services.store.wrapped  # type: ignore[attr-defined]
            return summary, events, store.conflicts.conflicts["skill"]
        finally:
            await services.close()

    summary, events, conflicts = asyncio.run(main())
    assert summary.imported == 3
    assert sorted(e.key for e in events) == ["judgment:a:c-0", "judgment:a:c-1", "judgment:a:c-2"]
    assert [e.at for e in events if e.key == "judgment:a:c-1"] == [1_000.0]
    assert conflicts == 1
