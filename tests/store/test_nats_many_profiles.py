"""NATS: several agents' profiles from the leaderboard index's heads, after one request for
the stream's last event: what each agent's own read answers, another instance's writes
included the moment they are acknowledged; an undecodable last message fails as the
agent's own read does; a stopped index falls back to the agents' reads."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

import nats
from agentladder.errors import CorruptRecord
from agentladder.store.base import Store
from agentladder.store.nats.config import parse_nats_url
from agentladder.store.url import open_store
from tests.store.builders import award, judgment
from tests.store.test_nats_heads import counting_reads
from tests.store.test_nats_store import server_of

AGENTS = [f"a{i}" for i in range(12)]


async def _own_reads(store: Store, agents: list[str]) -> dict[str, Any]:
    found = {agent: await store.get_profile(agent) for agent in agents}
    return {agent: value for agent, value in found.items() if value is not None}


def test_many_profiles_see_every_acknowledged_write_of_either_instance(
    nats_store_url: str,
) -> None:
    """Random awards through two stores on one server; after each, the other store's
    batched read equals the agents' own reads (revisions included), with one request."""

    async def main() -> None:
        first, second = await open_store(nats_store_url), await open_store(nats_store_url)
        rng = random.Random(7)
        try:
            reads = counting_reads(first._js)  # type: ignore[attr-defined]
            for step in range(60):
                writer, reader = (first, second) if rng.random() < 0.5 else (second, first)
                agent = rng.choice(AGENTS[:8])
                await award(writer, judgment(agent, f"c-{step}", score=rng.uniform(0, 10)))
                asked = rng.sample(AGENTS, 6)
                reads.clear()
                many = await reader.get_many_profiles(asked)
                if reader is first:
                    known = sum(1 for a in asked if a in many)
                    assert len(reads) == 1 + len(asked) - known  # the last event, the unknown
                assert many == await _own_reads(writer, asked)
                assert list(many) == [a for a in asked if a in many]
        finally:
            await first.close()
            await second.close()

    asyncio.run(main())


def test_an_undecodable_last_message_fails_the_batched_read(nats_store_url: str) -> None:
    """As `get_profile`: CorruptRecord naming the message's subject."""
    prefix = parse_nats_url(nats_store_url).prefix

    async def main() -> None:
        store = await open_store(nats_store_url)
        nc = await nats.connect(server_of(nats_store_url))
        try:
            await award(store, judgment("zed", "c-1"))
            await award(store, judgment("a1", "c-1"))
            await nc.jetstream().publish(f"{prefix}.oracle.event.zed", b"not json")
            with pytest.raises(CorruptRecord) as caught:
                await store.get_many_profiles(["a1", "zed"])
            assert caught.value.key == f"{prefix}.oracle.event.zed"
            assert list(await store.get_many_profiles(["a1", "ghost"])) == ["a1"]
        finally:
            await nc.close()
            await store.close()

    asyncio.run(main())


def test_a_stopped_index_falls_back_to_each_agents_read(nats_store_url: str) -> None:
    """The index stopped (its wait refused): the agents' own reads answer."""

    async def main() -> None:
        store = await open_store(nats_store_url)
        try:
            await award(store, judgment("a1", "c-1"))
            await award(store, judgment("a2", "c-1"))
            await store._index.stop()  # type: ignore[attr-defined]
            await award(store, judgment("a1", "c-2"))
            many = await store.get_many_profiles(["a1", "a2"])
            assert many == await _own_reads(store, ["a1", "a2"])
            assert many["a1"].value.stats.total_tasks == 2
        finally:
            await store.close()

    asyncio.run(main())
