"""Atomic batch publish on a real nats-server: all messages stored, or none."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable

import pytest
from nats.aio.client import Client
from nats.js.kv import KeyValue

import nats
from agentladder.errors import InvalidInput, RevisionConflict, StoreError, StoreUnavailable
from agentladder.natsserver import NatsServer
from agentladder.store.nats.batch import BatchMessage, enable_atomic, publish_atomic

BUCKET = "nsed_agent_ranks"
STREAM = f"KV_{BUCKET}"


def subject(key: str) -> str:
    """The stream subject of a key of the ranks bucket."""
    return f"$KV.{BUCKET}.{key}"


def run_kv(server: NatsServer, body: Callable[[Client, KeyValue], Awaitable[None]]) -> None:
    """Connect, create the ranks bucket with allow_atomic, run ``body``, always close."""

    async def main() -> None:
        nc = await nats.connect(server.url)
        try:
            js = nc.jetstream()
            kv = await js.create_key_value(bucket=BUCKET)
            assert await enable_atomic(js, STREAM) is True
            await body(nc, kv)
        finally:
            await nc.close()

    asyncio.run(main())


async def snapshot(kv: KeyValue, keys: list[str]) -> dict[str, tuple[bytes | None, int | None]]:
    """Value and revision of each key."""
    result = {}
    for key in keys:
        entry = await kv.get(key)
        result[key] = (entry.value, entry.revision)
    return result


def test_batch_of_three_puts_commits_all(nats_server: NatsServer) -> None:
    """Three CAS puts to three keys commit together; kv.get sees the new revisions."""

    async def body(nc: Client, kv: KeyValue) -> None:
        rev_a = await kv.put("a", b"a0")
        rev_b = await kv.put("b", b"b0")
        ack = await publish_atomic(
            nc,
            [
                BatchMessage(subject("a"), b"a1", rev_a),
                BatchMessage(subject("b"), b"b1", rev_b),
                BatchMessage(subject("c"), b"c1", 0),
            ],
        )
        assert (ack.stream, ack.count) == (STREAM, 3)
        assert await snapshot(kv, ["a", "b", "c"]) == {
            "a": (b"a1", ack.seq - 2),
            "b": (b"b1", ack.seq - 1),
            "c": (b"c1", ack.seq),
        }

    run_kv(nats_server, body)


def test_stale_revision_in_second_message_stores_nothing(nats_server: NatsServer) -> None:
    """A stale expected revision on the 2nd message raises a conflict naming it; none stored."""

    async def body(nc: Client, kv: KeyValue) -> None:
        for key in "abc":
            await kv.put(key, b"old")
        stale = (await kv.get("b")).revision
        current_b = await kv.put("b", b"newer")
        before = await snapshot(kv, ["a", "b", "c"])
        batch = [
            BatchMessage(subject("a"), b"x", before["a"][1]),
            BatchMessage(subject("b"), b"x", stale),
            BatchMessage(subject("c"), b"x", before["c"][1]),
        ]
        with pytest.raises(RevisionConflict) as caught:
            await publish_atomic(nc, batch)
        assert caught.value.key == subject("b")
        assert (caught.value.expected, caught.value.actual) == (stale, current_b)
        assert await snapshot(kv, ["a", "b", "c"]) == before
        assert (await nc.jetstream().stream_info(STREAM)).state.last_seq == current_b

    run_kv(nats_server, body)


def test_expected_zero_on_an_existing_key_conflicts(nats_server: NatsServer) -> None:
    """Expected revision 0 means "create": it conflicts when the key exists."""

    async def body(nc: Client, kv: KeyValue) -> None:
        revision = await kv.put("a", b"exists")
        with pytest.raises(RevisionConflict) as caught:
            await publish_atomic(nc, [BatchMessage(subject("a"), b"again", 0)])
        assert (caught.value.key, caught.value.expected) == (subject("a"), 0)
        assert caught.value.actual == revision
        assert await snapshot(kv, ["a"]) == {"a": (b"exists", revision)}

    run_kv(nats_server, body)


def test_concurrent_cas_increments_lose_no_update(nats_server: NatsServer) -> None:
    """Two tasks doing read, batch-CAS, retry 50 times each leave both counters at 100."""

    async def worker(url: str) -> int:
        nc = await nats.connect(url)
        conflicts = 0
        try:
            kv = await nc.jetstream().key_value(BUCKET)
            for _ in range(50):
                for _attempt in range(1000):
                    entries = [await kv.get(key) for key in ("x", "y")]
                    batch = [
                        BatchMessage(
                            subject(key),
                            str(int(entry.value or b"0") + 1).encode(),
                            entry.revision,
                        )
                        for key, entry in zip(("x", "y"), entries, strict=True)
                    ]
                    try:
                        await publish_atomic(nc, batch)
                        break
                    except RevisionConflict:
                        conflicts += 1
                else:
                    raise AssertionError("no progress after 1000 attempts")
        finally:
            await nc.close()
        return conflicts

    async def body(nc: Client, kv: KeyValue) -> None:
        await kv.put("x", b"0")
        await kv.put("y", b"0")
        await asyncio.gather(worker(nats_server.url), worker(nats_server.url))
        assert [(await kv.get(key)).value for key in ("x", "y")] == [b"100", b"100"]

    run_kv(nats_server, body)


def test_batch_across_two_subjects_of_a_plain_stream(nats_server: NatsServer) -> None:
    """A plain (non-KV) stream with allow_atomic stores a two-subject batch in order."""

    async def main() -> None:
        nc = await nats.connect(nats_server.url)
        try:
            js = nc.jetstream()
            await js.add_stream(name="EVENTS", subjects=["events.>"], allow_atomic=True)
            ack = await publish_atomic(
                nc,
                [
                    BatchMessage("events.order", b"order", headers={"Kind": "order"}),
                    BatchMessage("events.payment", b"payment", 0),
                ],
            )
            assert (ack.stream, ack.seq, ack.count) == ("EVENTS", 2, 2)
            first = await js.get_msg("EVENTS", 1)
            second = await js.get_msg("EVENTS", 2)
            assert (first.subject, first.data) == ("events.order", b"order")
            assert first.headers is not None
            assert first.headers["Kind"] == "order"
            assert (second.subject, second.data) == ("events.payment", b"payment")
        finally:
            await nc.close()

    asyncio.run(main())


def test_enable_atomic_is_idempotent_and_keeps_the_config(nats_server: NatsServer) -> None:
    """enable_atomic turns allow_atomic on once, then reports no change; KV limits stay."""

    async def body(nc: Client, kv: KeyValue) -> None:
        js = nc.jetstream()
        assert await enable_atomic(js, STREAM) is False
        config = (await js.stream_info(STREAM)).config
        assert config.allow_atomic is True
        assert config.max_msgs_per_subject == 1
        assert config.subjects == [f"$KV.{BUCKET}.>"]

    run_kv(nats_server, body)


def test_stream_without_allow_atomic_raises_store_error(nats_server: NatsServer) -> None:
    """A batch to a stream without allow_atomic raises StoreError with code 10174."""

    async def main() -> None:
        nc = await nats.connect(nats_server.url)
        try:
            await nc.jetstream().add_stream(name="PLAIN", subjects=["plain.>"])
            with pytest.raises(StoreError, match="10174") as caught:
                await publish_atomic(
                    nc, [BatchMessage("plain.a", b"1"), BatchMessage("plain.b", b"2")]
                )
            assert not isinstance(caught.value, StoreUnavailable)
            assert (await nc.jetstream().stream_info("PLAIN")).state.messages == 0
        finally:
            await nc.close()

    asyncio.run(main())


def test_subject_without_stream_is_unavailable(nats_server: NatsServer) -> None:
    """A batch to subjects no stream listens on raises StoreUnavailable (no responders)."""

    async def main() -> None:
        nc = await nats.connect(nats_server.url)
        try:
            with pytest.raises(StoreUnavailable, match="no JetStream stream"):
                await publish_atomic(nc, [BatchMessage("nowhere.a", b"1")], timeout=1.0)
        finally:
            await nc.close()

    asyncio.run(main())


@pytest.mark.parametrize(
    "messages",
    [
        [],
        [BatchMessage("s.a", b"1", 1), BatchMessage("s.a", b"2", 1)],
        [BatchMessage("s.a", b"1", -1)],
        [BatchMessage(f"s.{i}", b"") for i in range(1001)],
    ],
    ids=["empty", "same-subject-expected-twice", "negative", "too-many"],
)
def test_batches_the_server_would_refuse_are_invalid_input(
    nats_server: NatsServer, messages: list[BatchMessage]
) -> None:
    """Empty, oversize, negative or repeated-expectation batches raise InvalidInput unsent."""

    async def main() -> None:
        nc = await nats.connect(nats_server.url)
        try:
            with pytest.raises(InvalidInput):
                await publish_atomic(nc, messages)
        finally:
            await nc.close()

    asyncio.run(main())


def test_stored_batch_values_decode_as_written(nats_server: NatsServer) -> None:
    """JSON values written by a batch read back unchanged through kv.get."""

    async def body(nc: Client, kv: KeyValue) -> None:
        value = json.dumps({"agent_id": "a", "rank": 3}).encode()
        await publish_atomic(nc, [BatchMessage(subject("agent-a"), value, 0)])
        assert json.loads((await kv.get("agent-a")).value or b"") == {"agent_id": "a", "rank": 3}

    run_kv(nats_server, body)
