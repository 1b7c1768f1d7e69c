"""NATS specifics: the rank bucket as others see it, markers, updates, restart, corruption."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from nats.aio.client import Client

import nats
from agentladder.domain.agents import AgentConfig
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.errors import CorruptRecord
from agentladder.natsserver import NatsServer
from agentladder.store.base import Store
from agentladder.store.nats.config import parse_nats_url
from agentladder.store.records import DeliberationDoc, OracleCommit, Registration
from agentladder.store.url import open_store
from tests.store.builders import award, judgment, judgment_commit

SPEC_FIELDS = {
    "rank", "rounds_completed", "avg_score", "deliberations_completed", "wins", "updated_at",
    "avg_latency_ms", "tasks_completed", "tasks_failed", "recent_latencies_ms",
}  # fmt: skip
STATS = AgentPerformanceStats(rank=3, avg_score=7.8, wins=3, recent_latencies_ms=(25000.0,))


def server_of(url: str) -> str:
    """The nats:// server part of a store URL."""
    return url.split("?", maxsplit=1)[0]


def run(url: str, body: Callable[[Store, Client], Awaitable[None]]) -> None:
    """Open the store and a plain nats-py client on its server, run ``body``, close both."""

    async def main() -> None:
        store = await open_store(url)
        nc = await nats.connect(server_of(url))
        try:
            await body(store, nc)
        finally:
            await nc.close()
            await store.close()

    asyncio.run(main())


def test_rank_bucket_is_a_kv_bucket_holding_the_spec_json(nats_store_url: str) -> None:
    """A plain client reads the configured bucket: key agent_id, value the spec's JSON."""
    bucket = parse_nats_url(nats_store_url).rank_bucket

    async def body(store: Store, nc: Client) -> None:
        revisions = await store.commit_stats({"audit_expert": (STATS, 0)})
        js = nc.jetstream()
        entry = await (await js.key_value(bucket)).get("audit_expert")
        document = json.loads(entry.value or b"")
        assert set(document) == SPEC_FIELDS
        assert document == json.loads(STATS.model_dump_json())
        assert entry.revision == revisions["audit_expert"]
        config = (await js.stream_info(f"KV_{bucket}")).config
        assert (config.max_msgs_per_subject, config.allow_atomic) == (1, True)

    run(nats_store_url, body)


def test_marker_entries_are_skipped_when_listing(nats_store_url: str) -> None:
    """Markers live in the bucket as =applied=<token> keys; list_stats shows agents only."""
    bucket = parse_nats_url(nats_store_url).rank_bucket
    odd = "deliberation 2/with spaces"

    async def body(store: Store, nc: Client) -> None:
        await store.commit_stats({"a": (STATS, 0)}, marker="delib-1")
        await store.commit_stats({"b": (STATS, 0)}, marker=odd)
        assert list(await store.list_stats()) == ["a", "b"]
        assert await store.marker_applied(odd)
        keys = await (await nc.jetstream().key_value(bucket)).keys()
        digest = hashlib.sha256(odd.encode()).hexdigest()
        assert sorted(keys) == sorted(["a", "b", "=applied=delib-1", f"=applied={digest}"])

    run(nats_store_url, body)


def test_rank_updates_are_published_on_their_subject(nats_store_url: str) -> None:
    """After a commit each agent's new stats arrive on <prefix>.ranks.updated.<agent_id>."""
    prefix = parse_nats_url(nats_store_url).prefix

    async def body(store: Store, nc: Client) -> None:
        sub = await nc.subscribe(f"{prefix}.ranks.updated.>")
        await nc.flush()
        promoted = STATS.model_copy(update={"rank": 4})
        await store.commit_stats({"a": (STATS, 0), "b.x": (promoted, 0)})
        got = [await sub.next_msg(timeout=5) for _ in range(2)]
        assert {m.subject: AgentPerformanceStats.model_validate_json(m.data) for m in got} == {
            f"{prefix}.ranks.updated.a": STATS,
            f"{prefix}.ranks.updated.b.x": promoted,
        }

    run(nats_store_url, body)


async def snapshot(store: Store) -> dict[str, Any]:
    """Everything the store holds for the agents of the restart test."""
    return {
        "stats": await store.list_stats(),
        "marker": await store.marker_applied("d-1"),
        "profiles": await store.list_profiles(),
        "a1": await store.get_profile("a1"),
        "events": await store.events("a1"),
        "ledger": await store.ledger("a1", limit=1000),
        "leaderboard": await store.leaderboard(None, 10),
        "registrations": await store.list_registrations(),
        "deliberations": await store.list_deliberations(),
    }


def test_everything_survives_a_server_restart() -> None:
    """Stop and restart nats-server on the same folder: a new connection reads it all back."""
    with NatsServer() as server:
        url = f"{server.url}?prefix=restart&rank_bucket=restart_ranks"

        async def write() -> dict[str, Any]:
            store = await open_store(url)
            try:
                await store.commit_stats({"a1": (STATS, 0)}, marker="d-1")
                for i in range(3):
                    await award(store, judgment("a1", f"c-{i}", score=9.0 + i / 10))
                await award(store, judgment("a2", "c-0", task_type="poetry"))
                config = AgentConfig(name="a1", model_name="gpt-4o")
                await store.put_registration(Registration(config=config, first_seen=1, last_seen=2))
                await store.put_deliberation(
                    DeliberationDoc(id="d-1", status="completed", created_at=5.0, body={"n": 1})
                )
                return await snapshot(store)
            finally:
                await store.close()

        async def read() -> dict[str, Any]:
            store = await open_store(url)
            try:
                return await snapshot(store)
            finally:
                await store.close()

        before = asyncio.run(write())
        server.restart()
        after = asyncio.run(read())
    assert after == before
    assert len(before["events"]) == 3
    assert [r.agent_id for r in before["leaderboard"]] == ["a1", "a2"]


def test_corrupt_rank_value_names_its_key(nats_store_url: str) -> None:
    """Bad JSON put by another client: CorruptRecord naming the key; other keys still read."""
    bucket = parse_nats_url(nats_store_url).rank_bucket

    async def body(store: Store, nc: Client) -> None:
        await store.commit_stats({"good": (STATS, 0)})
        await (await nc.jetstream().key_value(bucket)).put("bad", b'{"rank": -1')
        with pytest.raises(CorruptRecord) as caught:
            await store.get_stats("bad")
        assert caught.value.key == f"{bucket}/bad"
        good = await store.get_stats("good")
        assert good is not None
        assert good.value == STATS
        with pytest.raises(CorruptRecord):
            await store.list_stats()

    run(nats_store_url, body)


def test_corrupt_event_fails_its_reads_but_not_the_leaderboard(
    nats_store_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """An undecodable event message: get_profile raises, the index logs, skips and goes on."""
    prefix = parse_nats_url(nats_store_url).prefix

    async def body(store: Store, nc: Client) -> None:
        await award(store, judgment("a1", "c-1"))
        await nc.jetstream().publish(f"{prefix}.oracle.event.zed", b"not json")
        with pytest.raises(CorruptRecord) as caught:
            await store.get_profile("zed")
        assert caught.value.key == f"{prefix}.oracle.event.zed"
        assert [r.agent_id for r in await store.leaderboard(None, 10)] == ["a1"]
        await award(store, judgment("a2", "c-1", score=9.5))
        assert [r.agent_id for r in await store.leaderboard(None, 10)] == ["a2", "a1"]

    run(nats_store_url, body)
    assert "leaderboard index skips" in caplog.text


def test_leaderboard_rows_kept_between_reads_follow_every_award(nats_store_url: str) -> None:
    """The index keeps the rows it built; an award to an agent that keeps its place still
    shows at once (its rows are rebuilt), and a longer limit gets the longer top."""

    async def main() -> None:
        store = await open_store(nats_store_url)
        try:
            for agent in ("a", "b", "c"):
                await award(store, judgment(agent, "1", score=9.5, task_type="poetry"))
            await award(store, judgment("a", "2", score=9.5, task_type="poetry"))
            first = await store.leaderboard("poetry", 2)
            assert [(r.agent_id, r.tasks) for r in first] == [("a", 2), ("b", 1)]
            assert await store.leaderboard("poetry", 2) == first  # the kept rows
            await award(store, judgment("a", "3", score=9.5, task_type="poetry"))
            again = await store.leaderboard("poetry", 2)
            assert [(r.agent_id, r.tasks) for r in again] == [("a", 3), ("b", 1)]
            overall = await store.leaderboard(None, 1)
            assert [(r.agent_id, r.tasks) for r in overall] == [("a", 3)]
            longer = await store.leaderboard("poetry", 10)
            assert [r.agent_id for r in longer] == ["a", "b", "c"]
            assert [r.position for r in longer] == [1, 2, 3]
        finally:
            await store.close()

    asyncio.run(main())


def test_leaderboard_reflects_writes_of_another_instance(nats_store_url: str) -> None:
    """Two stores on one server: each one's leaderboard shows the other's awards at once."""

    async def main() -> None:
        first = await open_store(nats_store_url)
        second = await open_store(nats_store_url)
        try:
            await award(second, judgment("x", "1", score=9.5))
            assert [r.agent_id for r in await first.leaderboard(None, 5)] == ["x"]
            await award(first, judgment("y", "1", score=9.5, task_type="poetry"))
            await award(second, judgment("x", "2", score=9.5, task_type="poetry"))
            for store in (first, second):
                rows = await store.leaderboard("poetry", 5)
                assert [(r.agent_id, r.specialization_xp) for r in rows] == [("x", 50), ("y", 50)]
                assert [r.agent_id for r in await store.leaderboard(None, 5)] == ["x", "y"]
        finally:
            await first.close()
            await second.close()

    asyncio.run(main())


def test_thousands_of_events_read_back_in_order(nats_store_url: str) -> None:
    """2000 events of one agent come back complete and in order; dotted ids stay apart."""
    base = judgment_commit(None, judgment("many", "c-0"))

    async def body(store: Store, nc: Client) -> None:
        revision = 0
        for i in range(2000):
            payload = {**base.event.payload, "contract_id": f"c-{i}"}
            event = base.event.model_copy(update={"key": f"c-{i}", "payload": payload})
            commit = OracleCommit(event=event, profile=base.profile)
            revision = await store.commit_oracle(commit, revision)
        await award(store, judgment("many.more", "c-0"))
        events = await store.events("many")
        assert [(e.seq, e.key) for e in events] == [(i + 1, f"c-{i}") for i in range(2000)]
        lines = len(base.event.lines)
        page = await store.ledger("many", offset=1999 * lines, limit=100)
        assert [e.contract_id for e in page] == ["c-1999"] * lines
        assert [p.id for p in await store.list_profiles()] == ["many", "many.more"]
        assert [e.key for e in await store.events("many.more")] == ["c-0"]

    run(nats_store_url, body)
