"""The deliberation records not yet done with, kept from the bucket's stream as it grows.

Recovery looks, every ``recover_interval_s`` on every instance, for the records stored
as queued, running or settling (``OPEN_STATUSES``). A KV bucket has no index by value, so
``list_deliberations`` read and decoded every record ever stored for it: a pass over a
bucket of 100,000 records read all of them, and the cost grew with the history.

The bucket keeps one message per key (history 1): a record written again is a new
message at the end of the stream and its old one is gone. So the records are kept apart
as they come: each call reads the messages after the last stream sequence it read (pages
of ``PAGE``), keeps those in an open status by key and drops the others (and deleted
ones). A record not written since is as it was when last read. The first call reads the
whole bucket once; each one after reads what was written since, whatever the history
(``docs/storage-nats.md``, "Deliberation records").
"""

from __future__ import annotations

import asyncio

from nats.aio.msg import Msg
from nats.js import JetStreamContext

from agentladder.store.codec import decode
from agentladder.store.nats.io import is_deleted, scan_page
from agentladder.store.records import OPEN_STATUSES, DeliberationDoc

__all__ = ["PAGE", "OpenRecords"]

PAGE = 5000
"""Messages read per ordered consumer."""


class OpenRecords:
    """The open records of one deliberation bucket, as of the last ``current``."""

    def __init__(self, js: JetStreamContext, bucket: str) -> None:
        self._js = js
        self._stream = f"KV_{bucket}"
        self._prefix = f"$KV.{bucket}."
        self._after = 0  # the last stream sequence read
        self._open: dict[str, DeliberationDoc] = {}
        self._reading = asyncio.Lock()
        self.read = 0
        """Messages read so far (what each call costs, for tests and benchmarks)."""

    async def current(self) -> list[DeliberationDoc]:
        """The open records now: the messages written since the last call read first."""
        async with self._reading:
            info = await self._js.stream_info(self._stream)
            if info.state.last_seq < self._after:  # the bucket was made again: read it all
                self._after = 0
                self._open.clear()
            while True:
                page = await scan_page(
                    self._js, self._stream, f"{self._prefix}>", start=self._after + 1, limit=PAGE
                )
                for msg in page:
                    self._take(msg.subject.removeprefix(self._prefix), msg)
                    self._after = msg.metadata.sequence.stream
                self.read += len(page)
                if len(page) < PAGE:
                    return list(self._open.values())

    def _take(self, key: str, msg: Msg) -> None:
        """Keep or drop the record ``key`` as its newest message says."""
        if is_deleted(msg):
            self._open.pop(key, None)
            return
        doc = decode(DeliberationDoc, msg.data, msg.subject)
        if doc.status in OPEN_STATUSES:
            self._open[key] = doc
        else:
            self._open.pop(key, None)
