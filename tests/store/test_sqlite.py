"""SQLite specifics: the schema, migrations, restart, corrupt rows, URLs."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from agentladder.domain.rules import OracleRules
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.errors import AlreadyApplied, CorruptRecord, InvalidInput
from agentladder.services.oracle.verify import verify_store
from agentladder.store.records import DeliberationDoc
from agentladder.store.sqlite import connections as sqlite_module
from agentladder.store.sqlite import ops as sqlite_ops
from agentladder.store.sqlite import schema
from agentladder.store.sqlite.schema import MIGRATIONS
from agentladder.store.sqlite.store import SqliteStore
from agentladder.store.url import open_store
from tests.store.builders import award, judgment

SPEC_COLUMNS = {
    "agent_profiles": [
        "id", "provider", "model", "xp", "level", "total_tasks", "total_xp_earned",
        "total_cost", "average_score", "success_rate", "created_at", "updated_at",
    ],
    "specializations": [
        "agent_id", "task_type", "xp", "level", "tasks_completed", "avg_score", "best_score",
        "current_streak",
    ],
    "achievements": ["id", "agent_id", "achievement", "awarded_at"],
    "xp_history": ["id", "agent_id", "event", "xp_awarded", "contract_id", "timestamp"],
}  # fmt: skip


def test_specification_tables_have_its_columns(tmp_path: Path) -> None:
    """The four tables of the level-up spec exist with its columns, in its order, first."""
    db = tmp_path / "s.db"
    asyncio.run(_open_close(db))
    conn = sqlite3.connect(db)
    for table, columns in SPEC_COLUMNS.items():
        names = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
        assert names[: len(columns)] == columns, table
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    versions = [row[0] for row in conn.execute("SELECT version FROM schema_migrations")]
    assert versions == [m[0] for m in MIGRATIONS]
    conn.close()


async def _open_close(db: Path) -> None:
    store = await open_store(f"sqlite:///{db}")
    await store.close()


def test_data_survives_close_and_reopen(tmp_path: Path) -> None:
    """Stats, profiles, events and the ledger are all there after reopening the file."""
    db = tmp_path / "r.db"

    async def write() -> None:
        store = await open_store(f"sqlite:///{db}")
        await store.commit_stats({"a1": (AgentPerformanceStats(rank=2), 0)}, marker="d1")
        for i in range(3):
            await award(store, judgment("a1", f"c-{i}"))
        await store.close()

    async def read() -> None:
        store = await open_store(f"sqlite:///{db}")
        stats = await store.get_stats("a1")
        assert stats is not None
        assert stats.value.rank == 2
        assert await store.marker_applied("d1")
        profile = await store.get_profile("a1")
        assert profile is not None
        assert profile.value.stats.total_tasks == 3
        assert len(await store.events("a1")) == 3
        assert len(await store.ledger("a1")) >= 6
        await store.close()

    asyncio.run(write())
    asyncio.run(read())


def test_reopening_does_not_migrate_twice(tmp_path: Path) -> None:
    """A second open finds every migration recorded and applies none."""
    db = tmp_path / "m.db"
    asyncio.run(SqliteStore(db).close())
    asyncio.run(SqliteStore(db).close())
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT version, applied_at FROM schema_migrations").fetchall()
    conn.close()
    assert [version for version, _ in rows] == [m[0] for m in MIGRATIONS]


def test_corrupt_row_is_reported_with_its_key(tmp_path: Path) -> None:
    """Bad JSON in one rank row raises CorruptRecord naming the key; other rows still read."""
    db = tmp_path / "c.db"

    async def main() -> None:
        store = await open_store(f"sqlite:///{db}")
        await store.commit_stats(
            {"good": (AgentPerformanceStats(), 0), "bad": (AgentPerformanceStats(), 0)}
        )
        raw = sqlite3.connect(db)
        raw.execute("UPDATE rank_stats SET stats_json = '{\"rank\": -1' WHERE agent_id = 'bad'")
        raw.commit()
        raw.close()
        with pytest.raises(CorruptRecord) as caught:
            await store.get_stats("bad")
        assert caught.value.key == "rank_stats/bad"
        assert await store.get_stats("good") is not None
        await store.close()

    asyncio.run(main())


@pytest.mark.parametrize(
    "url",
    [
        "sqlite://",
        "sqlite://host/x.db",
        "sqlite:///x.db?synchronous=fast",
        "sqlite:///x.db?cache=1",
        "ftp://x",
    ],
)
def test_bad_store_urls_are_refused(url: str) -> None:
    """Malformed URLs, unknown options and schemes are refused naming the store field."""
    with pytest.raises(InvalidInput) as caught:
        asyncio.run(open_store(url))
    assert caught.value.field == "store"


def test_a_version_2_file_migrates_its_oracle_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file written before migration 3 keeps its events, their order and their keys."""
    db = tmp_path / "v2.db"

    async def before() -> list[object]:
        store = SqliteStore(db)
        for i in range(4):
            await award(store, judgment("a1", f"c-{i}", task_type=f"t{i % 2}"))
        await award(store, judgment("a2", "c-0"))
        events = [*await store.events("a1"), *await store.events("a2")]
        await store.close()
        return list(events)

    with monkeypatch.context() as patched:
        patched.setattr(schema, "MIGRATIONS", MIGRATIONS[:2])
        written = asyncio.run(before())

    async def after() -> None:
        store = SqliteStore(db)
        assert [*await store.events("a1"), *await store.events("a2")] == written
        with pytest.raises(AlreadyApplied):
            await award(store, judgment("a1", "c-2"))
        assert await award(store, judgment("a1", "c-9")) == 5
        assert [e.seq for e in await store.events("a1")] == [1, 2, 3, 4, 5]
        assert (await verify_store(store, OracleRules())).ok
        await store.close()

    asyncio.run(after())
    conn = sqlite3.connect(db)
    versions = [row[0] for row in conn.execute("SELECT version FROM schema_migrations")]
    indexes = {row[1] for row in conn.execute("PRAGMA index_list(oracle_events)")}
    conn.close()
    assert versions == [m[0] for m in MIGRATIONS]
    assert indexes == {"oracle_events_key"}


def test_checkpoint_pages_from_the_url(tmp_path: Path) -> None:
    """``?checkpoint_pages=`` sets the writer's automatic checkpoint; SQLite's 1,000 is the
    default; anything but an integer from 1 to 1,000,000 is refused naming the option."""

    async def body() -> None:
        for query, expected in (("", 1000), ("?checkpoint_pages=500", 500)):
            store = await open_store(f"sqlite:///{tmp_path / 'c.db'}{query}")
            assert isinstance(store, SqliteStore)
            assert store.checkpoint_pages == expected
            await store.close()
        for bad in ("0", "-5", "x", "2000000"):
            refused = f"checkpoint_pages='{bad}': it must be an integer from 1 to 1000000"
            with pytest.raises(InvalidInput, match=refused):
                await open_store(f"sqlite:///{tmp_path / 'c.db'}?checkpoint_pages={bad}")

    asyncio.run(body())


def test_a_large_file_checkpoints_more_often_unless_the_url_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file at least ``LARGE_FILE_BYTES`` long when opened checkpoints every 100 pages,
    a smaller one (or a new one) every 1,000; ``?checkpoint_pages=`` overrides both."""
    db = tmp_path / "big.db"
    contracts = iter(range(10))

    async def pages(query: str = "") -> int:
        store = await open_store(f"sqlite:///{db}{query}")
        assert isinstance(store, SqliteStore)
        await award(store, judgment("a1", f"c-{next(contracts)}"))
        await store.close()
        return store.checkpoint_pages

    assert asyncio.run(pages()) == 1000  # new
    monkeypatch.setattr(sqlite_module, "LARGE_FILE_BYTES", db.stat().st_size)
    assert asyncio.run(pages()) == sqlite_module.CHECKPOINT_PAGES_LARGE == 100
    assert asyncio.run(pages("?checkpoint_pages=1000")) == 1000
    monkeypatch.setattr(sqlite_module, "LARGE_FILE_BYTES", db.stat().st_size + 1)
    assert asyncio.run(pages()) == 1000


def test_inline_reads_from_the_url_and_both_ways_answer_alike(tmp_path: Path) -> None:
    """``?inline_reads=off`` sends every read to the reader threads, ``on`` (the default)
    runs short ones on the loop's thread: the same answers; any other value is refused."""

    async def body() -> dict[str, object]:
        answers: dict[str, object] = {}
        for flag in ("on", "off"):
            store = await open_store(f"sqlite:///{tmp_path / 'i.db'}?inline_reads={flag}")
            assert isinstance(store, SqliteStore)
            assert store.inline_reads is (flag == "on")
            if flag == "on":
                await award(store, judgment("a", "c1"))
            profile = await store.get_profile("a")
            board = await store.leaderboard(None, 10)
            many = await store.get_many_profiles(["a", "nobody"])
            answers[flag] = (profile, board, many)
            await store.close()
        with pytest.raises(InvalidInput, match="inline_reads='maybe': it must be on or off"):
            await open_store(f"sqlite:///{tmp_path / 'i.db'}?inline_reads=maybe")
        return answers

    answers = asyncio.run(body())
    assert answers["on"] == answers["off"]


def test_a_read_refused_for_a_lock_on_the_loop_is_run_by_a_reader_thread(
    tmp_path: Path,
) -> None:
    """An inline read that meets a lock (SQLite's "database is locked", which a WAL reader
    sees only in rare cases and cannot be provoked while the store holds the file) is run
    again on a reader thread, whose answer is returned; other errors are raised as they are."""
    loop_thread = threading.get_ident()
    seen: list[bool] = []

    def read(conn: sqlite3.Connection) -> int:
        on_loop = threading.get_ident() == loop_thread
        seen.append(on_loop)
        if on_loop:
            raise sqlite3.OperationalError("database is locked")
        return int(conn.execute("SELECT 41 + 1").fetchone()[0])

    def broken(conn: sqlite3.Connection) -> int:
        raise sqlite3.OperationalError("no such table: nothing")

    async def body() -> None:
        store = SqliteStore(tmp_path / "l.db")
        try:
            assert await store._read_short(read) == 42
            assert seen == [True, False]
            with pytest.raises(sqlite3.OperationalError, match="no such table"):
                await store._read_short(broken)
        finally:
            await store.close()

    asyncio.run(body())


def test_awaiting_tasks_cancelled_mid_write_leave_the_store_writable(tmp_path: Path) -> None:
    """Tasks cancelled while their award waits for the writer (a deadline, a shutdown):
    each award is all there or not at all, the next write commits, and close returns."""

    async def run() -> None:
        store = await open_store(f"sqlite:///{tmp_path / 'c.db'}")
        tasks = [asyncio.ensure_future(award(store, judgment("a1", f"c-{i}"))) for i in range(40)]
        await asyncio.sleep(0)
        for task in tasks[1::2]:
            task.cancel()
        outcomes = await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.wait_for(award(store, judgment("a1", "after")), timeout=10)
        profile = await store.get_profile("a1")
        assert profile is not None
        applied = {event.key for event in await store.events("a1")}
        done = {f"c-{i}" for i, o in enumerate(outcomes) if not isinstance(o, BaseException)}
        assert done | {"after"} <= applied  # every acknowledged award is stored
        assert profile.value.stats.total_tasks == len(applied)  # and nothing half-stored
        assert any(isinstance(o, asyncio.CancelledError) for o in outcomes)
        await asyncio.wait_for(store.close(), timeout=10)

    asyncio.run(run())


def test_reads_of_many_agents_leave_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``get_many_*`` of up to ``INLINE_MANY`` agents runs on the loop's thread; of more (the
    directory's tens of thousands) on a reader thread, so it never holds the loop."""
    loop_thread = threading.get_ident()
    on_loop: list[bool] = []
    real = sqlite_ops.run_read

    def recording(conn: sqlite3.Connection, fn: Any) -> Any:
        on_loop.append(threading.get_ident() == loop_thread)
        return real(conn, fn)

    monkeypatch.setattr(sqlite_ops, "run_read", recording)
    few = [f"a{i}" for i in range(sqlite_module.INLINE_MANY)]
    many = [*few, "one-more"]

    async def body() -> None:
        store = SqliteStore(tmp_path / "m.db")
        try:
            for read in (store.get_many_stats, store.get_many_profiles):
                on_loop.clear()
                assert await read(few) == {}
                assert await read(many) == {}
                assert on_loop == [True, False], read
            on_loop.clear()
            assert await store.get_many_registrations(few) == {}
            assert await store.get_many_registrations(many) == {}
            assert on_loop == [True, False]
        finally:
            await store.close()

    asyncio.run(body())


def test_a_version_6_file_finds_each_agents_deliberations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration 7 indexes the deliberations already stored by agent (a record without a
    list of agents adds none), and later records are indexed as they are written."""
    db = tmp_path / "v6.db"

    async def before() -> None:  # the schema of version 6, the rows as its code wrote them
        await SqliteStore(db).close()

    with monkeypatch.context() as patched:
        patched.setattr(schema, "MIGRATIONS", MIGRATIONS[:6])
        asyncio.run(before())
    conn = sqlite3.connect(db)
    rows = [(f"d{i}", "completed", float(i), json.dumps({"agents": agents}))
            for i, agents in enumerate((["a", "b"], ["b"], ["a", "c"]))]  # fmt: skip
    rows += [("odd", "failed", 9.0, '{"agents": "a"}'), ("bad", "failed", 8.0, "not json")]
    with conn:
        conn.executemany("INSERT INTO deliberations VALUES (?,?,?,?)", rows)
    conn.close()

    async def after() -> None:
        store = SqliteStore(db)
        assert [d.id for d in await store.list_deliberations(agent="a")] == ["d2", "d0"]
        assert [d.id for d in await store.list_deliberations(agent="b")] == ["d1", "d0"]
        doc = DeliberationDoc(id="d3", status="queued", created_at=3.0, body={"agents": ["a"]})
        await store.put_deliberation(doc)
        assert [d.id for d in await store.list_deliberations(agent="a")] == ["d3", "d2", "d0"]
        await store.close()

    asyncio.run(after())
