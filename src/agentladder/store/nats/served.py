"""The gateway's answered requests (``store/served.py``) in the JetStream KV bucket
``<prefix>_served``: key the contract id, value the record's JSON. The bucket is made on
first use with a time to live of the ``keep_s`` asked then (``gateway.feedback_days``):
JetStream forgets each record that long after it was written. A bucket made earlier
keeps its own time to live (change it with the ``nats`` CLI).

A window of records (``since``) is read from the bucket's stream, never key by key: the
server counts the messages stored since the window's start (a record is stored once its
second's batch is written, at its ``at`` or later; the read starts ``CLOCK_MARGIN_S``
earlier, for the two clocks). When they are ``limit`` or fewer they are read from that
time, else the stream's last ``limit`` sequences are (a record rewritten, a stream's once
it ended, leaves a gap there: the read may then hold a few fewer records than
``limit``). Either way at most ``limit`` messages are read, and the records answered
before ``since`` are left out.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import nats.js.errors
from nats.js import JetStreamContext
from nats.js.kv import KeyValue

from agentladder.store.codec import decode
from agentladder.store.nats.config import NatsOptions, kv_key_ok
from agentladder.store.nats.io import (
    STREAM_NAME_IN_USE,
    count_since,
    is_deleted,
    scan_page,
    scan_since,
)
from agentladder.store.served import ServedRequest

__all__ = ["CLOCK_MARGIN_S", "KvServed"]

CLOCK_MARGIN_S = 60.0
"""A window's read starts this long before its start: the stream's times are the NATS
server's clock, a record's ``at`` this process's."""


class KvServed:
    """Put and get the gateway's records."""

    def __init__(self, js: JetStreamContext, options: NatsOptions) -> None:
        self._js = js
        self.bucket = f"{options.prefix}_served"
        self._replicas = options.replicas
        self._kv: KeyValue | None = None

    async def _bound(self, keep_s: float | None) -> KeyValue | None:
        """The bucket; made when ``keep_s`` is given and it does not exist yet (None
        when it does not and nothing is to be written: nothing was ever kept)."""
        if self._kv is not None:
            return self._kv
        try:
            self._kv = await self._js.key_value(self.bucket)
        except nats.js.errors.BucketNotFoundError:
            if keep_s is None:
                return None
            try:
                self._kv = await self._js.create_key_value(
                    bucket=self.bucket, history=1, replicas=self._replicas, ttl=keep_s
                )
            except nats.js.errors.APIError as error:
                if error.err_code != STREAM_NAME_IN_USE:  # else another process made it
                    raise
                self._kv = await self._js.key_value(self.bucket)
        return self._kv

    async def put(self, records: list[ServedRequest], keep_s: float) -> None:
        """Each record under its contract id (one put each, at once)."""
        kv = await self._bound(keep_s)
        assert kv is not None
        await asyncio.gather(
            *(kv.put(r.contract_id, r.model_dump_json().encode()) for r in records
              if kv_key_ok(r.contract_id))
        )  # fmt: skip

    async def get(self, contract_id: str) -> ServedRequest | None:
        """The record, or None."""
        if not kv_key_ok(contract_id):
            return None
        kv = await self._bound(None)
        if kv is None:
            return None
        try:
            entry = await kv.get(contract_id)
        except nats.js.errors.KeyNotFoundError:
            return None
        if entry.value is None:
            return None
        return decode(ServedRequest, entry.value, f"{self.bucket}/{contract_id}")

    async def since(self, since: float, limit: int) -> list[ServedRequest]:
        """The records answered at ``since`` or later, newest first, at most ``limit``
        messages read (the module says how)."""
        kv = await self._bound(None)
        if kv is None or limit <= 0:
            return []
        stream, subject = f"KV_{self.bucket}", f"$KV.{self.bucket}.>"
        start = datetime.fromtimestamp(max(0.0, since - CLOCK_MARGIN_S), UTC)
        if await count_since(self._js, stream, subject, start) <= limit:
            messages = await scan_since(self._js, stream, subject, since=start, limit=limit)
        else:
            info = await self._js.stream_info(stream)
            first = max(1, int(info.state.last_seq) - limit + 1)
            messages = await scan_page(self._js, stream, subject, start=first, limit=limit)
        found = [
            decode(ServedRequest, msg.data, f"{self.bucket}/{msg.subject.rsplit('.', 1)[-1]}")
            for msg in messages
            if not is_deleted(msg) and msg.data
        ]
        kept = [record for record in found if record.at >= since]
        kept.sort(key=lambda record: (-record.at, record.contract_id))
        return kept
