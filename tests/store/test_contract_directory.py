"""Store contract, the directory: every backend answers, for every combination of filters,
order and page, the bytes the reference built from its reads answers (on SQLite, one
query on the stored JSON; its fallback for a registration without listing parts too)."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import sqlite3
from typing import Any

from agentladder.domain.agents import AgentConfig
from agentladder.domain.registry import online_window_s
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.store.base import Store
from agentladder.store.directory import directory_from_reads
from agentladder.store.listing import AgentListingCache
from agentladder.store.records import DirectoryQuery, DirectorySort, Registration
from agentladder.store.sqlite.store import SqliteStore

WINDOW = online_window_s(10.0)
NOW = 1_800_000_000.5
SORTS: tuple[DirectorySort, ...] = ("name", "rank", "avg_score", "cost")
PRICES = (0.0, 0.5, 1.25, 2.5, 3.0, 10.0)  # few, so that costs tie and names decide


async def fill(store: Store, rng: random.Random, agents: int) -> None:
    """``agents`` registrations with random tags, providers, prices and heartbeats; rank
    stats for about two in three, with ranks and scores that often tie."""
    stats: dict[str, tuple[AgentPerformanceStats, int]] = {}
    for number in range(agents):
        name = f"agent-{rng.randrange(1000):03d}-{number}"
        config = AgentConfig(
            name=name,
            provider_id=rng.choice(("p1", "p2")),
            capability_tags=tuple(sorted(rng.sample(("a", "b", "c"), rng.randint(0, 2)))),
            input_price_per_mtok=rng.choice(PRICES),
            output_price_per_mtok=rng.choice(PRICES),
        )
        last_seen = NOW - rng.choice((0.0, 1.0, WINDOW - 0.5, WINDOW, WINDOW + 1.0, 3600.0))
        await store.put_registration(
            Registration(config=config, first_seen=1.0, last_seen=last_seen)
        )
        if rng.random() < 0.67:
            stats[name] = (
                AgentPerformanceStats(
                    rank=rng.randint(0, 4), avg_score=rng.choice((0.0, 5.5, 7.25, 9.0))
                ),
                0,
            )
    await store.commit_stats(stats)


def queries() -> list[DirectoryQuery]:
    """Every filter and order, with and without a page."""
    found = []
    combinations = itertools.product(
        SORTS, (None, "a"), (None, "p1"), (None, True, False), (0, 2), ((None, 0), (5, 3))
    )
    for sort, tag, provider, online, min_rank, (limit, offset) in combinations:
        query = DirectoryQuery(
            tag=tag, provider=provider, min_rank=min_rank, online=online, sort=sort,
            limit=limit, offset=offset,
        )  # fmt: skip
        found.append(query)
    return found


async def compare(store: Store) -> int:
    """Compare the store's directory with the reference for every query; how many agents
    the queries listed in all (so that the comparison is not of empty pages only)."""
    listed = 0
    for query in queries():
        got = await store.agent_directory_json(NOW, WINDOW, query)
        want = await directory_from_reads(store, AgentListingCache(), NOW, WINDOW, query)
        assert got == want, query
        listed += len(json.loads(got)["agents"])
    return listed


def test_the_directory_equals_the_reference_for_every_query(with_store: Any) -> None:
    async def body(store: Store) -> None:
        await fill(store, random.Random(5), 80)
        assert await compare(store) > 1000
        everyone = json.loads(await store.agent_directory_json(NOW, WINDOW, DirectoryQuery()))
        names = [agent["name"] for agent in everyone["agents"]]
        assert names == sorted(names)
        assert len(names) == 80

    with_store(body)


def test_sqlite_builds_in_python_what_its_query_cannot(tmp_path: Any) -> None:
    """A registration stored without listing parts (by a writer that does not keep them):
    the directory is built from the reads, the same bytes as the reference."""

    async def body() -> None:
        path = tmp_path / "d.db"
        store = SqliteStore(path)
        try:
            await fill(store, random.Random(9), 30)
            raw = sqlite3.connect(path)
            with raw:
                raw.execute(
                    "UPDATE registrations SET listing_head = NULL WHERE agent_id ="
                    " (SELECT min(agent_id) FROM registrations)"
                )
            raw.close()
            assert await compare(store) > 100
        finally:
            await store.close()

    asyncio.run(body())
