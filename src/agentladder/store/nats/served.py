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

A record asked with a client request id (``ServedRequest.request_id``) is also put in
the bucket ``<prefix>_served_requests`` under ``r<SHA-256 of the id, hex>`` (any id is a
valid key so), with the same time to live: the last record put under an id is the one
``find`` gives for it (a retry's answer replaces the first's).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Collection
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

__all__ = ["CLOCK_MARGIN_S", "FIND_AT_ONCE", "KvServed", "request_key"]

CLOCK_MARGIN_S = 60.0
"""A window's read starts this long before its start: the stream's times are the NATS
server's clock, a record's ``at`` this process's."""


FIND_AT_ONCE = 64
"""Gets of ``find`` in flight at once."""


def request_key(request_id: str) -> str:
    """The key of a client request id in ``<prefix>_served_requests``."""
    return "r" + hashlib.sha256(request_id.encode()).hexdigest()


class KvServed:
    """Put and get the gateway's records."""

    def __init__(self, js: JetStreamContext, options: NatsOptions) -> None:
        self._js = js
        self.bucket = f"{options.prefix}_served"
        self.requests = f"{options.prefix}_served_requests"
        self._replicas = options.replicas
        self._kvs: dict[str, KeyValue] = {}

    async def _bound(self, keep_s: float | None, bucket: str | None = None) -> KeyValue | None:
        """The bucket (the records', unless ``bucket``); made when ``keep_s`` is given and
        it does not exist yet (None when it does not and nothing is to be written: nothing
        was ever kept)."""
        name = bucket or self.bucket
        if name in self._kvs:
            return self._kvs[name]
        try:
            kv = await self._js.key_value(name)
        except nats.js.errors.BucketNotFoundError:
            if keep_s is None:
                return None
            try:
                kv = await self._js.create_key_value(
                    bucket=name, history=1, replicas=self._replicas, ttl=keep_s
                )
            except nats.js.errors.APIError as error:
                if error.err_code != STREAM_NAME_IN_USE:  # else another process made it
                    raise
                kv = await self._js.key_value(name)
        self._kvs[name] = kv
        return kv

    async def put(self, records: list[ServedRequest], keep_s: float) -> None:
        """Each record under its contract id, and under its request id's key when it has
        one (one put each, at once)."""
        kv = await self._bound(keep_s)
        assert kv is not None
        asked = [r for r in records if r.request_id is not None]
        by_id = await self._bound(keep_s, self.requests) if asked else None
        puts = [kv.put(r.contract_id, r.model_dump_json().encode()) for r in records
                if kv_key_ok(r.contract_id)]  # fmt: skip
        if by_id is not None:
            puts += [by_id.put(request_key(r.request_id or ""), r.model_dump_json().encode())
                     for r in asked]  # fmt: skip
        await asyncio.gather(*puts)

    async def get(self, contract_id: str) -> ServedRequest | None:
        """The record, or None."""
        if not kv_key_ok(contract_id):
            return None
        return await self._read(await self._bound(None), contract_id, self.bucket)

    async def _read(self, kv: KeyValue | None, key: str, bucket: str) -> ServedRequest | None:
        if kv is None:
            return None
        try:
            entry = await kv.get(key)
        except nats.js.errors.KeyNotFoundError:
            return None
        if entry.value is None:
            return None
        return decode(ServedRequest, entry.value, f"{bucket}/{key}")

    async def find(self, ids: Collection[str]) -> dict[str, ServedRequest]:
        """Each id as a contract id, else as a request id (``FIND_AT_ONCE`` gets in
        flight at once)."""
        wanted = list(dict.fromkeys(ids))
        records, requests = await self._bound(None), await self._bound(None, self.requests)
        found: dict[str, ServedRequest] = {}

        async def one(key: str) -> None:
            record = await self._read(records, key, self.bucket) if kv_key_ok(key) else None
            if record is None:
                record = await self._read(requests, request_key(key), self.requests)
            if record is not None:
                found[key] = record

        for start in range(0, len(wanted), FIND_AT_ONCE):
            await asyncio.gather(*(one(key) for key in wanted[start : start + FIND_AT_ONCE]))
        return {key: found[key] for key in wanted if key in found}

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
