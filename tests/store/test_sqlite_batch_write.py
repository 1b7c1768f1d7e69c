"""A batch of judgments on SQLite (``submit_many``, what ``agentladder import`` runs) is one
job of the writer: the Oracle's events, ledger lines and profiles and the skill evidence
of the events created, in one transaction and one commit
(``SqliteStore.apply_oracle_many_then_skill``)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from agentladder.errors import StoreUnavailable
from agentladder.services.oracle.batch import ItemStatus, submit_many
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.service import Oracle
from agentladder.services.skill.service import SkillService
from agentladder.store.sqlite.store import SqliteStore
from tests.store.test_sqlite_judgment_write import REFUSE, _stored


def _batch(first: int, count: int) -> list[JudgmentRequest]:
    return [
        JudgmentRequest(
            agent_id=f"agent-{i % 3}", contract_id=f"c-{i}", task_type="sql", score=8.5,
            new_agent=True,
        )
        for i in range(first, first + count)
    ]  # fmt: skip


def test_a_batch_and_its_evidence_commit_once(tmp_path: Path) -> None:
    """Ten new judgments of three agents with a skill model cost one commit of the
    writer, which holds their events and their skill events."""

    async def body() -> None:
        store = SqliteStore(tmp_path / "a.db")
        try:
            oracle = Oracle(store, skill=SkillService(store))
            await submit_many(oracle, _batch(0, 3))  # the agents known, the task type admitted
            statements: list[str] = []
            store._write_conn.set_trace_callback(statements.append)
            try:
                outcomes = await submit_many(oracle, _batch(3, 10))
            finally:
                store._write_conn.set_trace_callback(None)
            assert [o.status for o in outcomes] == [ItemStatus.IMPORTED] * 10
            assert statements.count("COMMIT") == 1, statements
            assert any(s.startswith("INSERT INTO skill_events") for s in statements)
            assert await _stored(store) == (13, 3, await _lines(store), 13)
        finally:
            await store.close()

    asyncio.run(body())


def test_a_refused_skill_write_leaves_nothing_of_the_batch(tmp_path: Path) -> None:
    """The skill log refuses its inserts (a trigger): the batch fails and none of its
    Oracle events, profiles or ledger lines are stored either; once the log takes them
    again, the same batch is applied whole (each judgment once, with its evidence)."""

    async def body() -> None:
        store = SqliteStore(tmp_path / "a.db")
        try:
            oracle = Oracle(store, skill=SkillService(store))
            await store._write(lambda conn: conn.execute(REFUSE))
            with pytest.raises((sqlite3.IntegrityError, StoreUnavailable), match="refused"):
                await submit_many(oracle, _batch(0, 10))
            assert await _stored(store) == (0, 0, 0, 0)
            await store._write(lambda conn: conn.execute("DROP TRIGGER refuse"))
            outcomes = await submit_many(oracle, _batch(0, 10))
            assert [o.status for o in outcomes] == [ItemStatus.IMPORTED] * 10
            assert await _stored(store) == (10, 3, await _lines(store), 10)
        finally:
            await store.close()

    asyncio.run(body())


async def _lines(store: SqliteStore) -> int:
    """The ledger lines the stored events say they wrote."""
    total = 0
    for agent in range(3):
        total += sum(len(event.lines) for event in await store.events(f"agent-{agent}"))
    return total
