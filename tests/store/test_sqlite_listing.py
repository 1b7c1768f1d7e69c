"""SQLite's listing parts: backfilled by migration 4, cleared by a writer that does not
keep them, never trusted over a doc they no longer match; corrupt values named."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest

from agentladder.domain.agents import AgentConfig
from agentladder.domain.registry import online_window_s
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.errors import CorruptRecord
from agentladder.store.listing import registration_parts
from agentladder.store.memory import MemoryStore
from agentladder.store.records import Registration
from agentladder.store.sqlite import schema
from agentladder.store.sqlite.schema import MIGRATIONS
from agentladder.store.sqlite.store import SqliteStore

WINDOW = online_window_s(10.0)
NOW = 1000.0


def _registration(name: str, last_seen: float, **fields: object) -> Registration:
    config = AgentConfig.model_validate({"name": name, **fields})
    return Registration(config=config, first_seen=1.0, last_seen=last_seen)


async def _reference(registrations: list[Registration]) -> bytes:
    """The listing of the same registrations built from decoded values (memory store)."""
    memory = MemoryStore()
    for registration in registrations:
        await memory.put_registration(registration)
    return await memory.agent_listing_json(NOW, WINDOW)


def _old_writer(db: Path, agent: str, last_seen: float, doc: str) -> None:
    """A write as agentladder wrote registrations before migration 4 (doc only)."""
    conn = sqlite3.connect(db)
    conn.execute(
        "INSERT INTO registrations (agent_id, last_seen, doc) VALUES (?,?,?)"
        " ON CONFLICT (agent_id) DO UPDATE SET last_seen = excluded.last_seen,"
        " doc = excluded.doc",
        (agent, last_seen, doc),
    )
    conn.commit()
    conn.close()


def test_each_registration_keeps_its_parts_in_its_row(tmp_path: Path) -> None:
    """put_registration writes the parts with the doc; they are the doc's parts."""
    db = tmp_path / "parts.db"

    async def main() -> None:
        store = SqliteStore(db)
        await store.put_registration(_registration("a", 5.0, description="first"))
        await store.put_registration(_registration("a", 9.0, description="second é"))
        await store.close()

    asyncio.run(main())
    conn = sqlite3.connect(db)
    doc, head, tail = conn.execute(
        "SELECT doc, listing_head, listing_tail FROM registrations"
    ).fetchone()
    conn.close()
    assert (head, tail) == registration_parts(Registration.model_validate_json(doc))
    assert '"description":"second é"' in head
    assert '"last_seen":9.0' in tail


def test_a_version_3_file_gets_its_parts_and_lists_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Registrations stored before migration 4 (one in an older doc without ``remote``
    nor the cost per round) are backfilled and listed as their decoded values."""
    db = tmp_path / "v3.db"

    async def create() -> None:
        await SqliteStore(db).close()

    with monkeypatch.context() as patched:
        patched.setattr(schema, "MIGRATIONS", MIGRATIONS[:3])
        asyncio.run(create())
    current = _registration("b", 995.0, description='say "hi" ✓', capability_tags=["x"])
    _old_writer(db, "b", 995.0, current.model_dump_json())
    _old_writer(
        db, "a", 900.0, '{"config":{"name":"a","model_name":"m"},"first_seen":1,"last_seen":900}'
    )

    async def after() -> None:
        store = SqliteStore(db)
        listed = await store.agent_listing_json(NOW, WINDOW)
        registrations = await store.list_registrations()
        await store.close()
        assert listed == await _reference(registrations)
        assert [a["status"] for a in json.loads(listed)["agents"]] == ["offline", "online"]

    asyncio.run(after())
    conn = sqlite3.connect(db)
    assert (
        conn.execute("SELECT count(*) FROM registrations WHERE listing_head IS NULL").fetchone()[0]
        == 0
    )
    conn.close()


def test_a_writer_without_the_parts_never_leaves_them_stale(tmp_path: Path) -> None:
    """A doc replaced (or inserted) by a writer that does not know the parts: the trigger
    clears the row's parts, and the listing shows the new doc, built from it."""
    db = tmp_path / "old-writer.db"

    async def main() -> None:
        store = SqliteStore(db)
        await store.put_registration(_registration("a", 990.0, description="before"))
        now_a = _registration("a", 999.0, description="after")
        _old_writer(db, "a", 999.0, now_a.model_dump_json())
        newcomer = _registration("c", 10.0)
        _old_writer(db, "c", 10.0, newcomer.model_dump_json())
        listed = await store.agent_listing_json(NOW, WINDOW)
        assert listed == await _reference([now_a, newcomer])
        await store.put_registration(_registration("c", 999.5))  # parts again
        listed = await store.agent_listing_json(NOW, WINDOW)
        assert listed == await _reference([now_a, _registration("c", 999.5)])
        await store.close()

    asyncio.run(main())


def test_corrupt_values_fail_the_listing_naming_them(tmp_path: Path) -> None:
    """Stats that are not JSON, or a registration's doc that cannot be decoded (its parts
    cleared), make the listing raise ``CorruptRecord`` with the key, as the reads do."""
    db = tmp_path / "corrupt.db"

    async def main() -> None:
        store = SqliteStore(db)
        await store.put_registration(_registration("a", 990.0))
        await store.put_registration(_registration("b", 990.0))
        await store.commit_stats({"a": (AgentPerformanceStats(), 0)})
        raw = sqlite3.connect(db)
        raw.execute("UPDATE rank_stats SET stats_json = '{\"rank\": ' WHERE agent_id = 'a'")
        raw.commit()
        with pytest.raises(CorruptRecord) as caught:
            await store.agent_listing_json(NOW, WINDOW)
        assert caught.value.key == "rank_stats/a"
        raw.execute("UPDATE rank_stats SET stats_json = ? WHERE agent_id = 'a'",
                    (AgentPerformanceStats().model_dump_json(),))  # fmt: skip
        raw.execute("UPDATE registrations SET doc = '{\"config\": 1}' WHERE agent_id = 'b'")
        raw.commit()
        raw.close()
        with pytest.raises(CorruptRecord) as caught:
            await store.agent_listing_json(NOW, WINDOW)
        assert caught.value.key == "registrations/b"
        await store.close()

    asyncio.run(main())
