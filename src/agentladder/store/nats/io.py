"""JetStream plumbing of the NATS store: connecting, creating buckets and streams, reading.

- ``connect``: one nats-py connection that reconnects forever once it was established,
  but fails fast (``StoreUnavailable``) when no server answers at start; its trouble is
  logged in one line per outage (``callbacks``, also for the agents' connection), not
  with nats-py's traceback at every reconnect attempt.
- ``ensure_kv`` / ``ensure_oracle_stream``: create or bind, safe when several processes
  start at once; ``allow_atomic`` is switched on where atomic batches are published.
- ``scan``: read a consistent run of messages (all of a subject, or the last of each
  subject matching a wildcard) through one ephemeral ordered consumer, instead of one
  request per message.
- ``last_msg``: the last message on a subject (or None), by the stream's message get.
- ``count_after``: how many messages on a subject follow a stream sequence, counted by
  the server; ``count_since`` and ``scan_since``: the same, and the messages, from a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import datetime
from typing import Any, cast

import nats.errors
import nats.js.errors
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import (
    AckPolicy,
    ConsumerConfig,
    DeliverPolicy,
    RawStreamMsg,
    StorageType,
    StreamConfig,
)
from nats.js.kv import KeyValue

from agentladder.errors import StoreError, StoreUnavailable
from agentladder.store.nats.batch import enable_atomic
from agentladder.store.nats.config import NatsOptions

__all__ = [
    "CONNECT_TIMEOUT",
    "REQUEST_TIMEOUT",
    "callbacks",
    "connect",
    "count_after",
    "count_since",
    "ensure_kv",
    "ensure_oracle_stream",
    "is_deleted",
    "kv_values",
    "last_msg",
    "scan",
    "scan_page",
    "scan_since",
]

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 2
REQUEST_TIMEOUT = 5.0
RECONNECT_WAIT = cast("int", 0.25)  # nats-py annotates int but sleeps any float
STREAM_NAME_IN_USE = 10058
_KV_OPERATION = "KV-Operation"


class _ConnectionLog:
    """Log connection trouble once per outage (a reconnect loop retries every 0.25 s)."""

    def __init__(self, url: str, nc: Client) -> None:
        self.url = url
        self.nc = nc
        self.quiet = False

    async def error(self, error: Exception) -> None:
        log.log(logging.DEBUG if self.quiet else logging.WARNING, "NATS %s: %r", self.url, error)
        self.quiet = True

    async def disconnected(self) -> None:
        closing = self.nc.is_closed or self.nc.is_draining
        log.log(logging.DEBUG if closing else logging.WARNING, "NATS %s: disconnected", self.url)
        self.quiet = True

    async def reconnected(self) -> None:
        log.warning("NATS %s: reconnected", self.url)
        self.quiet = False


def callbacks(url: str, nc: Client) -> dict[str, Any]:
    """The ``error_cb``, ``disconnected_cb`` and ``reconnected_cb`` of ``nc.connect`` that
    log its trouble in one line per outage (``url`` names it)."""
    events = _ConnectionLog(url, nc)
    return {
        "error_cb": events.error,
        "disconnected_cb": events.disconnected,
        "reconnected_cb": events.reconnected,
    }


async def connect(options: NatsOptions) -> Client:
    """Connect to the first server that answers; ``StoreUnavailable`` if none does."""
    nc = Client()
    try:
        await nc.connect(
            servers=list(options.servers),
            name="agentladder",
            connect_timeout=CONNECT_TIMEOUT,
            reconnect_time_wait=RECONNECT_WAIT,
            max_reconnect_attempts=1,  # at start: try each server twice, then give up
            drain_timeout=int(REQUEST_TIMEOUT),
            **callbacks(options.url, nc),
        )
    except (nats.errors.Error, OSError) as error:
        await nc.close()
        cause = nc.last_error or error
        raise StoreUnavailable(f"cannot connect to NATS at {options.url}: {cause!r}") from error
    nc.options["max_reconnect_attempts"] = -1  # once connected, reconnect forever
    return nc


class LazyKv:
    """A KV bucket bound (and created, ``ensure_kv``) on first use, once however many
    callers ask at the same time: the buckets a store needs only for some features."""

    def __init__(self, js: JetStreamContext, bucket: str, replicas: int) -> None:
        self._js = js
        self.bucket = bucket
        self._replicas = replicas
        self._kv: KeyValue | None = None
        self._opening = asyncio.Lock()

    async def open(self) -> KeyValue:
        """The bucket, bound on the first call."""
        async with self._opening:
            if self._kv is None:
                self._kv = await ensure_kv(self._js, self.bucket, self._replicas)
            return self._kv


async def ensure_kv(
    js: JetStreamContext, bucket: str, replicas: int, *, atomic: bool = False
) -> KeyValue:
    """Bind the KV bucket, creating it (history 1) if it does not exist yet."""
    try:
        await js.key_value(bucket)
    except nats.js.errors.BucketNotFoundError:
        try:
            await js.create_key_value(bucket=bucket, history=1, replicas=replicas)
        except nats.js.errors.APIError as error:
            if error.err_code != STREAM_NAME_IN_USE:  # else another process created it first
                raise
            await js.key_value(bucket)
    if atomic:
        await enable_atomic(js, f"KV_{bucket}")
    # Reads go to the stream leader even if the bucket allows direct gets (which followers
    # may serve a little behind): a read after a write sees it, with any replicas.
    return KeyValue(name=bucket, stream=f"KV_{bucket}", pre=f"$KV.{bucket}.", js=js, direct=False)


async def ensure_oracle_stream(js: JetStreamContext, options: NatsOptions) -> None:
    """Create the Oracle stream (file storage, allow_atomic, no deletes) or bind to it."""
    name = options.oracle_stream
    config = StreamConfig(
        name=name,
        description="agentladder Oracle: per-agent events and idempotency claims",
        subjects=[options.oracle_subjects],
        storage=StorageType.FILE,
        num_replicas=options.replicas,
        allow_atomic=True,
        deny_delete=True,
        deny_purge=True,
    )
    try:
        await js.add_stream(config)
        return
    except nats.js.errors.APIError as error:
        if error.err_code != STREAM_NAME_IN_USE:
            raise
    info = await js.stream_info(name)
    if options.oracle_subjects not in (info.config.subjects or []):
        raise StoreError(
            f"stream {name!r} exists with subjects {info.config.subjects}, "
            f"not {options.oracle_subjects!r}: choose another prefix"
        )
    await enable_atomic(js, name)


async def last_msg(js: JetStreamContext, stream: str, subject: str) -> RawStreamMsg | None:
    """The last message on ``subject`` (wildcards allowed), or None when there is none."""
    try:
        return await js.get_msg(stream, subject=subject)
    except nats.js.errors.NotFoundError:
        return None


def is_deleted(msg: Msg) -> bool:
    """Whether a KV stream message is a delete or purge marker rather than a value."""
    return bool(msg.headers) and (msg.headers or {}).get(_KV_OPERATION) in ("DEL", "PURGE")


async def scan(
    js: JetStreamContext,
    stream: str,
    subject: str,
    *,
    last_per_subject: bool,
    timeout: float = REQUEST_TIMEOUT,
) -> list[Msg]:
    """Every message on ``subject`` in stream order (or the last one of each subject).

    Reads through one ephemeral ordered consumer until it reports nothing pending, so the
    result is the stream as of some moment during the call. ``StoreUnavailable`` when a
    message does not arrive within ``timeout``.
    """
    policy = DeliverPolicy.LAST_PER_SUBJECT if last_per_subject else DeliverPolicy.ALL
    return await _read(js, stream, subject, ConsumerConfig(deliver_policy=policy), None, timeout)


async def scan_page(
    js: JetStreamContext,
    stream: str,
    subject: str,
    *,
    start: int,
    limit: int,
    timeout: float = REQUEST_TIMEOUT,
) -> list[Msg]:
    """At most ``limit`` messages on ``subject`` from stream sequence ``start`` on, in
    stream order (one ephemeral ordered consumer, stopped as soon as the page is full).
    ``StoreUnavailable`` when a message does not arrive within ``timeout``."""
    config = ConsumerConfig(deliver_policy=DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=start)
    return await _read(js, stream, subject, config, limit, timeout)


async def scan_since(
    js: JetStreamContext,
    stream: str,
    subject: str,
    *,
    since: datetime,
    limit: int,
    timeout: float = REQUEST_TIMEOUT,
) -> list[Msg]:
    """At most ``limit`` messages on ``subject`` stored at ``since`` or later, in stream
    order (one ephemeral ordered consumer from that time)."""
    config = ConsumerConfig(deliver_policy=DeliverPolicy.BY_START_TIME, opt_start_time=since)
    return await _read(js, stream, subject, config, limit, timeout)


async def _pending(js: JetStreamContext, stream: str, config: ConsumerConfig) -> int:
    """The messages a consumer of ``config`` (made for it, deleted after) has pending."""
    info = await js.add_consumer(stream, config, timeout=REQUEST_TIMEOUT)
    try:
        return int(info.num_pending or 0)
    finally:
        with contextlib.suppress(nats.errors.Error):  # else the server drops it when idle
            await js.delete_consumer(stream, info.name)


async def count_since(js: JetStreamContext, stream: str, subject: str, since: datetime) -> int:
    """How many messages on ``subject`` the stream holds stored at ``since`` or later,
    counted by the server (``count_after``'s consumer, from a time)."""
    config = ConsumerConfig(
        filter_subject=subject,
        deliver_policy=DeliverPolicy.BY_START_TIME,
        opt_start_time=since,
        ack_policy=AckPolicy.NONE,
        inactive_threshold=COUNT_INACTIVE_S,
    )
    return await _pending(js, stream, config)


async def _read(
    js: JetStreamContext,
    stream: str,
    subject: str,
    config: ConsumerConfig,
    limit: int | None,
    timeout: float,
) -> list[Msg]:
    """The messages one ephemeral ordered consumer with ``config`` delivers, until it
    reports nothing pending or ``limit`` are read."""
    queue: asyncio.Queue[Msg] = asyncio.Queue()

    async def collect(msg: Msg) -> None:
        queue.put_nowait(msg)

    sub = await js.subscribe(
        subject, stream=stream, cb=collect, ordered_consumer=True, config=config
    )
    try:
        info = await sub.consumer_info()
        delivered = info.delivered.consumer_seq if info.delivered else 0
        if not info.num_pending and not delivered:
            return []
        messages: list[Msg] = []
        last_seq = 0
        while limit is None or len(messages) < limit:
            try:
                msg = await asyncio.wait_for(queue.get(), timeout)
            except TimeoutError as error:
                raise StoreUnavailable(f"reading {subject!r} stalled for {timeout} s") from error
            metadata = msg.metadata
            if metadata.sequence.stream > last_seq:  # an ordered consumer reset may repeat
                last_seq = metadata.sequence.stream
                messages.append(msg)
            if metadata.num_pending == 0:
                break
        return messages
    finally:
        await sub.unsubscribe()


COUNT_INACTIVE_S = 10.0
"""How long the server keeps a counting consumer whose delete was lost (a dropped
connection): it removes it by itself then."""


async def count_after(js: JetStreamContext, stream: str, subject: str, after: int) -> int:
    """How many messages on ``subject`` (wildcards allowed) the stream holds past stream
    sequence ``after``, counted by the server: the pending count of an ephemeral consumer
    that would start there (created, read, deleted: two requests; no message is
    delivered). About the same whatever the count: over a skill log of 60,000 events 0.8 ms
    with none to count and 10 ms otherwise; of 200,000, 44 to 57 ms on a busy machine
    (docs/benchmarks.md, "Counting what awaits the fit")."""
    config = ConsumerConfig(
        filter_subject=subject,
        deliver_policy=DeliverPolicy.BY_START_SEQUENCE,
        opt_start_seq=max(1, after + 1),
        ack_policy=AckPolicy.NONE,
        inactive_threshold=COUNT_INACTIVE_S,
    )
    return await _pending(js, stream, config)


async def next_msg(
    js: JetStreamContext, stream: str, subject: str, seq: int
) -> RawStreamMsg | None:
    """The first message on ``subject`` at stream sequence ``seq`` or later, or None."""
    try:
        return await js.get_msg(stream, seq=seq, subject=subject, next=True)
    except nats.js.errors.NotFoundError:
        return None


async def msgs_at(js: JetStreamContext, stream: str, first: int, last: int) -> list[RawStreamMsg]:
    """The messages at stream sequences ``first`` to ``last`` that are still stored, in
    order: one request each, all sent at once (so the time is about one round trip's,
    where reading them one after another takes one per message)."""

    async def at(seq: int) -> RawStreamMsg | None:
        try:
            return await js.get_msg(stream, seq=seq)
        except nats.js.errors.NotFoundError:  # removed (a key's older value) or never written
            return None

    found = await asyncio.gather(*(at(seq) for seq in range(first, last + 1)))
    return [msg for msg in found if msg is not None]


async def kv_values(js: JetStreamContext, bucket: str) -> dict[str, bytes]:
    """Every key of a KV bucket with its last value, deleted and purged keys left out."""
    prefix = f"$KV.{bucket}."
    messages = await scan(js, f"KV_{bucket}", f"{prefix}>", last_per_subject=True)
    return {msg.subject.removeprefix(prefix): msg.data for msg in messages if not is_deleted(msg)}
