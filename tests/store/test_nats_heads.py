"""The NATS Oracle folds from the head the leaderboard index saw, and survives a stale one."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from nats.js import JetStreamContext

import nats
from agentladder.errors import RevisionConflict
from agentladder.store.base import OracleFold
from agentladder.store.nats.config import NatsOptions, parse_nats_url
from agentladder.store.nats.index import LeaderboardIndex
from agentladder.store.nats.oracle import HeadSource, OracleLog
from agentladder.store.url import open_store
from tests.store.builders import judgment, judgment_commit
from tests.store.test_nats_store import server_of


def fold_for(agent: str, contract: str) -> OracleFold:
    """The fold of one judgment of ``agent`` on ``contract``."""
    return lambda profile: judgment_commit(profile, judgment(agent, contract))


def counting_reads(js: JetStreamContext) -> list[str]:
    """Make ``js`` record the subject of every last-message read; the list it fills."""
    subjects: list[str] = []
    real = js.get_msg

    async def get_msg(stream: str, *args: Any, **kwargs: Any) -> Any:
        subjects.append(str(kwargs.get("subject")))
        return await real(stream, *args, **kwargs)

    js.get_msg = get_msg  # type: ignore[method-assign,assignment]
    return subjects


def with_log(
    url: str, body: Callable[[OracleLog, JetStreamContext, NatsOptions], Awaitable[None]],
    known_head: HeadSource,
) -> None:  # fmt: skip
    """Run ``body`` with an ``OracleLog`` taking heads from ``known_head`` on its own
    connection (the store is opened first, so the stream exists)."""

    async def main() -> None:
        await (await open_store(url)).close()
        options = parse_nats_url(url)
        nc = await nats.connect(server_of(url))
        try:
            js = nc.jetstream()
            await body(OracleLog(nc, js, options, known_head), js, options)
        finally:
            await nc.close()

    asyncio.run(main())


def test_the_index_keeps_each_agents_last_event_message(nats_store_url: str) -> None:
    """After the index applied an agent's events, its head is the last one's sequence and bytes."""

    async def main() -> None:
        store = await open_store(nats_store_url)
        options = parse_nats_url(nats_store_url)
        nc = await nats.connect(server_of(nats_store_url))
        index = LeaderboardIndex(nc.jetstream(), options.oracle_stream, options.event_prefix)
        try:
            first = judgment_commit(None, judgment("a1", "c-1"))
            revision = await store.commit_oracle(first, 0)
            second = judgment_commit(first.profile, judgment("a1", "c-2"))
            newer = await store.commit_oracle(second, revision)
            await index.start()
            await index.wait_for(newer, 5.0)
            head = index.head("a1")
            assert head is not None
            assert head[0] == newer
            assert b'"key":"c-2"' in head[1]
            assert index.head("a2") is None
        finally:
            await index.stop()
            await nc.close()
            await store.close()

    asyncio.run(main())


def test_a_known_head_is_folded_from_without_reading_it(nats_store_url: str) -> None:
    """With the index's head current, a judgment reads no event head from the server."""
    heads: dict[str, tuple[int, bytes]] = {}

    async def body(log: OracleLog, js: JetStreamContext, options: NatsOptions) -> None:
        first = await log.apply("a1", "c-1", fold_for("a1", "c-1"))
        assert first is not None
        msg = await js.get_msg(options.oracle_stream, subject=options.event_subject("a1"))
        assert msg.seq is not None
        heads["a1"] = (msg.seq, msg.data or b"")
        reads = counting_reads(js)
        fresh = OracleLog(log._nc, js, options, heads.get)  # no head of its own
        applied = await fresh.apply("a1", "c-2", fold_for("a1", "c-2"))
        assert applied is not None
        assert applied.created
        assert applied.profile.stats.total_tasks == 2
        assert options.event_subject("a1") not in reads

    with_log(nats_store_url, body, heads.get)


def test_a_stale_known_head_is_refused_then_read_from_the_server(nats_store_url: str) -> None:
    """An index that lags: the compare-and-set refuses, the retry reads the stored head,
    and neither a new key nor the key applied last is applied twice."""
    heads: dict[str, tuple[int, bytes]] = {}

    async def body(log: OracleLog, js: JetStreamContext, options: NatsOptions) -> None:
        await log.apply("a1", "c-1", fold_for("a1", "c-1"))
        msg = await js.get_msg(options.oracle_stream, subject=options.event_subject("a1"))
        assert msg.seq is not None
        heads["a1"] = (msg.seq, msg.data or b"")  # the index stops here
        await OracleLog(log._nc, js, options).apply("a1", "c-2", fold_for("a1", "c-2"))
        lagging = OracleLog(log._nc, js, options, heads.get)
        again = await lagging.apply("a1", "c-2", fold_for("a1", "c-2"))  # refused: applied
        assert again is not None
        assert not again.created
        other = OracleLog(log._nc, js, options, heads.get)
        with pytest.raises(RevisionConflict):
            await other.apply("a1", "c-3", fold_for("a1", "c-3"))
        third = await other.apply("a1", "c-3", fold_for("a1", "c-3"))  # reads the stored head
        assert third is not None
        assert third.created
        assert third.profile.stats.total_tasks == 3
        assert [e.key for e in await log.events("a1")] == ["c-1", "c-2", "c-3"]

    with_log(nats_store_url, body, heads.get)
