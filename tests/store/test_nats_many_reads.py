"""NATS: several agents' profiles from the leaderboard index's heads, their stats and
registrations from the buckets' mirrors (`store/nats/mirror.py`), each after one request
for the stream's last message: what each agent's own read answers, another instance's
writes included the moment they are acknowledged; an undecodable value fails as the
agent's own read does; a stopped index or mirror falls back to the agents' reads."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

import nats
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.errors import CorruptRecord
from agentladder.store.base import Store
from agentladder.store.nats.config import parse_nats_url
from agentladder.store.url import open_store
from tests.store.builders import award, judgment
from tests.store.test_contract_many import registration
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
                    assert len(reads) == 1  # the stream's last event, nothing more
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


async def _own(store: Store, agents: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    stats = {agent: await store.get_stats(agent) for agent in agents}
    registrations = {agent: await store.get_registration(agent) for agent in agents}
    return (
        {agent: value for agent, value in stats.items() if value is not None},
        {agent: value for agent, value in registrations.items() if value is not None},
    )


def test_many_stats_and_registrations_see_every_acknowledged_write(nats_store_url: str) -> None:
    """Random compare-and-set stats commits and heartbeats through two stores; after each,
    the other store's batched reads equal the agents' own reads, one request each."""

    async def main() -> None:
        first, second = await open_store(nats_store_url), await open_store(nats_store_url)
        rng = random.Random(11)
        try:
            reads = counting_reads(first._js)  # type: ignore[attr-defined]
            for step in range(80):
                writer, reader = (first, second) if rng.random() < 0.5 else (second, first)
                agent = rng.choice(AGENTS[:8])
                if rng.random() < 0.5:
                    found = await writer.get_stats(agent)
                    stats = AgentPerformanceStats(rank=rng.randrange(10), wins=step)
                    await writer.commit_stats({agent: (stats, found.revision if found else 0)})
                else:
                    await writer.put_registration(registration(agent, float(step)))
                asked = rng.sample(AGENTS, 6)
                reads.clear()
                many = (
                    await reader.get_many_stats(asked),
                    await reader.get_many_registrations(asked),
                )
                if reader is first:
                    assert len(reads) == 2  # each bucket's last message, nothing more
                assert many == await _own(writer, asked)
                assert list(many[0]) == [a for a in asked if a in many[0]]
        finally:
            await first.close()
            await second.close()

    asyncio.run(main())


def test_an_undecodable_stats_value_fails_the_batched_read(nats_store_url: str) -> None:
    """As `get_stats`: CorruptRecord naming the bucket and key; markers are never agents."""
    bucket = parse_nats_url(nats_store_url).rank_bucket

    async def main() -> None:
        store = await open_store(nats_store_url)
        nc = await nats.connect(server_of(nats_store_url))
        try:
            await store.commit_stats({"a1": (AgentPerformanceStats(rank=2), 0)}, marker="m1")
            kv = await nc.jetstream().key_value(bucket)
            await kv.put("zed", b'{"rank": -1')
            with pytest.raises(CorruptRecord) as caught:
                await store.get_many_stats(["a1", "zed"])
            assert caught.value.key == f"{bucket}/zed"
            await kv.delete("zed")
            many = await store.get_many_stats(["a1", "zed", "=applied=m1"])
            assert list(many) == ["a1"]
        finally:
            await nc.close()
            await store.close()

    asyncio.run(main())


def test_a_stopped_mirror_falls_back_to_each_agents_read(nats_store_url: str) -> None:
    """The mirrors stopped: the agents' own reads answer, later writes included."""

    async def main() -> None:
        store = await open_store(nats_store_url)
        try:
            await store.put_registration(registration("a1", 1.0))
            await store.put_registration(registration("a2", 1.0))
            await store._rank_mirror.stop()  # type: ignore[attr-defined]
            await store._registration_mirror.stop()  # type: ignore[attr-defined]
            await store.put_registration(registration("a1", 9.0))
            await store.commit_stats({"a2": (AgentPerformanceStats(rank=4), 0)})
            assert await store.get_many_stats(["a1", "a2"]) == (await _own(store, ["a2"]))[0]
            many = await store.get_many_registrations(["a1", "a2"])
            assert many["a1"].last_seen == 9.0
        finally:
            await store.close()

    asyncio.run(main())


def test_the_rank_mirror_keeps_agents_not_markers(nats_store_url: str) -> None:
    """A store opened on a bucket of 400 rankings' markers keeps the agents' entries only,
    and answers as the agents' own reads from its first read on."""

    async def main() -> None:
        writer = await open_store(nats_store_url)
        try:
            revisions = {"a1": 0, "a2": 0}
            for n in range(400):
                agent = ("a1", "a2")[n % 2]
                stats = AgentPerformanceStats(rank=n % 7, wins=n)
                made = await writer.commit_stats({agent: (stats, revisions[agent])}, marker=f"m{n}")
                revisions[agent] = made[agent]
            reader = await open_store(nats_store_url)
            try:
                first = await reader.get_many_stats(["a1", "a2", "=applied=m3"])
                assert first == (await _own(writer, ["a1", "a2"]))[0]
                mirror = reader._rank_mirror  # type: ignore[attr-defined]
                assert await mirror.caught_up(5.0)
                assert len(mirror) == 2
                assert await reader.get_many_stats(["a2", "a1"]) == first
            finally:
                await reader.close()
        finally:
            await writer.close()

    asyncio.run(main())
