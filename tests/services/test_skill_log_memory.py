"""Reading the skill log for a fit holds one page of parsed evidence at a time: the
memory ``read_log`` takes grows by the table's compact rows, not by every event's
evidence (which held about 1.3 KB an event and made a 1,000,000-judgment import's fit
exceed 300 MB)."""

from __future__ import annotations

import asyncio
import tracemalloc
from collections.abc import Mapping
from pathlib import Path

import pytest

from agentladder.domain.skill import AgentSkill, FleetSkill
from agentladder.services.skill import fitting
from agentladder.services.skill.evidence import judgment_evidence
from agentladder.services.skill.service import evidence_hash
from agentladder.store.skills import SkillCommit, SkillEvent, SkillFold
from agentladder.store.url import open_store

MB = 1 << 20
FEW, MANY = 4_000, 24_000


def _fold(event: SkillEvent) -> SkillFold:
    def fold(states: Mapping[str, AgentSkill], fleet: FleetSkill) -> SkillCommit:
        return SkillCommit(event, {}, None)

    return fold


async def _read_peak(path: Path, count: int) -> tuple[int, int]:
    """(peak bytes traced while reading the log of ``count`` judgments, rows read)."""
    store = await open_store(f"sqlite:///{path}")
    try:
        for first in range(0, count, 1_000):
            items = []
            for i in range(first, min(count, first + 1_000)):
                e = judgment_evidence(f"agent-{i % 500}", f"contract-{i}", ("sql", "code")[i % 2],
                                      (i * 7) % 11, True, 1_700_000_000.0 + i)  # fmt: skip
                event = SkillEvent(key=e.key, kind=e.kind, payload=e.model_dump_json(),
                                   payload_hash=evidence_hash(e), at=e.at)  # fmt: skip
                items.append((e.key, e.touched(), _fold(event)))
            await store.apply_skill_many(items)
        tracemalloc.start()
        try:
            log = await fitting.read_log(store)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        return peak, log.events
    finally:
        await store.close()


def test_reading_the_log_grows_by_compact_rows_not_by_parsed_evidence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages of 1,000 events: six times the events adds less than 8 MB to the read's peak
    (20,000 more events: under 420 bytes each, where each event's parsed evidence took
    about 1,300)."""
    monkeypatch.setattr(fitting, "PAGE", 1_000)
    few, rows_few = asyncio.run(_read_peak(tmp_path / "few.db", FEW))
    many, rows_many = asyncio.run(_read_peak(tmp_path / "many.db", MANY))
    print(f"read_log peak: {few / MB:.1f} MB ({FEW:,}), {many / MB:.1f} MB ({MANY:,})")
    assert (rows_few, rows_many) == (FEW, MANY)
    assert many - few < 8 * MB
