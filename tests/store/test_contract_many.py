"""Store contract, batched reads: ``get_many_stats``, ``get_many_profiles`` and
``get_many_registrations`` answer what the one-key reads answer, for the keys found."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agentladder.domain.agents import AgentConfig
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.store.base import Store
from agentladder.store.records import Registration
from agentladder.store.sqlite.store import SqliteStore
from tests.store.builders import award, judgment

STATS = AgentPerformanceStats(rank=2, avg_score=6.5, recent_latencies_ms=(12.0, 30.5))


def registration(name: str, last_seen: float) -> Registration:
    return Registration(config=AgentConfig(name=name), first_seen=1.0, last_seen=last_seen)


def test_many_stats_match_get_stats(with_store: Any) -> None:
    """Only agents with stats, in the order asked, repeats once; revisions as get_stats."""

    async def body(store: Store) -> None:
        assert await store.get_many_stats([]) == {}
        assert await store.get_many_stats(["nobody"]) == {}
        await store.commit_stats({"a": (STATS, 0), "b": (STATS.model_copy(update={"rank": 5}), 0)})
        many = await store.get_many_stats(["b", "nobody", "a", "b"])
        assert list(many) == ["b", "a"]
        for agent in ("a", "b"):
            assert many[agent] == await store.get_stats(agent)
        newer = STATS.model_copy(update={"wins": 1})
        await store.commit_stats({"a": (newer, many["a"].revision)})
        again = await store.get_many_stats(("a",))
        assert again["a"].value == newer
        assert again["a"] == await store.get_stats("a")

    with_store(body)


def test_many_profiles_match_get_profile(with_store: Any) -> None:
    """Only judged agents; each profile and revision as get_profile, also after an award."""

    async def body(store: Store) -> None:
        assert await store.get_many_profiles(["a1"]) == {}
        await award(store, judgment("a1", "c1"))
        await award(store, judgment("a2", "c2"))
        many = await store.get_many_profiles(["a2", "ghost", "a1"])
        assert list(many) == ["a2", "a1"]
        for agent in ("a1", "a2"):
            assert many[agent] == await store.get_profile(agent)
        await award(store, judgment("a1", "c3", task_type="python"))
        again = await store.get_many_profiles(["a1"])
        assert again["a1"] == await store.get_profile("a1")
        assert "python" in again["a1"].value.specializations

    with_store(body)


def test_many_registrations_match_get_registration(with_store: Any) -> None:
    """Only registered agents; the latest heartbeat of each."""

    async def body(store: Store) -> None:
        assert await store.get_many_registrations(["a"]) == {}
        await store.put_registration(registration("a", 5.0))
        await store.put_registration(registration("b", 6.0))
        await store.put_registration(registration("a", 9.0))
        many = await store.get_many_registrations(["b", "x", "a"])
        assert list(many) == ["b", "a"]
        assert many["a"].last_seen == 9.0
        assert many["b"] == await store.get_registration("b")

    with_store(body)


def test_sqlite_many_reads_see_another_writers_changes(tmp_path: Path) -> None:
    """The SQLite store's decoded values are kept by revision (or stored text): a write
    by another store on the same file is read, never a stale copy."""

    async def main() -> None:
        db = tmp_path / "shared.db"
        reader, writer = SqliteStore(db), SqliteStore(db)
        try:
            first = await reader.commit_stats({"a": (STATS, 0)})
            await award(reader, judgment("a", "c1"))
            await reader.put_registration(registration("a", 5.0))
            assert (await reader.get_many_stats(["a"]))["a"].value == STATS
            before = (await reader.get_many_profiles(["a"]))["a"]
            assert (await reader.get_many_registrations(["a"]))["a"].last_seen == 5.0

            newer = STATS.model_copy(update={"rank": 3})
            await writer.commit_stats({"a": (newer, first["a"])})
            await award(writer, judgment("a", "c2", score=3.0))
            await writer.put_registration(registration("a", 8.0))

            assert (await reader.get_many_stats(["a"]))["a"].value == newer
            after = (await reader.get_many_profiles(["a"]))["a"]
            assert after.revision == before.revision + 1
            assert after == await writer.get_profile("a")
            assert (await reader.get_many_registrations(["a"]))["a"].last_seen == 8.0
        finally:
            await reader.close()
            await writer.close()

    asyncio.run(main())


def test_sqlite_many_reads_page_long_key_lists(tmp_path: Path) -> None:
    """More keys than one query takes are read in several queries, none lost."""

    async def main() -> None:
        store = SqliteStore(tmp_path / "many.db", synchronous="off")
        try:
            names = [f"agent{i:04d}" for i in range(1201)]
            await store.commit_stats(dict.fromkeys(names[::2], (STATS, 0)))
            many = await store.get_many_stats(list(reversed(names)))
            assert list(many) == list(reversed(names[::2]))
        finally:
            await store.close()

    asyncio.run(main())
