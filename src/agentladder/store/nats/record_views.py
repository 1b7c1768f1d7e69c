"""Views of the deliberation records, kept from the bucket's stream as it grows.

A KV bucket has no index by value, so every listing of deliberation records read and
decoded every record ever stored, and two listings are made all the time: recovery
looks for the records stored as queued, running or settling (``OPEN_STATUSES``) every
``recover_interval_s`` on every instance, and the dashboard's deliberations page asks
for the newest every 2 s while it is open. Their cost grew with the history.

The bucket keeps one message per key (history 1): a record written again is a new
message at the end of the stream and its old one is gone. So each ``refresh`` reads the
messages after the last stream sequence it read (pages of ``PAGE``) and keeps two views:

- **open**: the records in an open status, whole, by key (the others dropped);
- **newest**: the sort keys (created_at descending, then id) of the newest ``NEWEST``
  records with their status and agents, a prefix of the order of all records: every
  record newer than its oldest key is in it (a newer record pushes the oldest out; once
  one has left, an older one is left out; a deleted one leaves). A page of a listing is
  answered from it when its items are all within the prefix (or the prefix is every
  record), the records then read by key; else the listing reads every record, as before.

A record not written since is as it was when last read, so both answer what a read of
every record would. The first refresh reads the whole bucket once; each one after reads
what was written since, whatever the history (``docs/storage-nats.md``, "Deliberation
records").
"""

from __future__ import annotations

import asyncio
import bisect
from collections.abc import Collection

from nats.aio.msg import Msg
from nats.js import JetStreamContext

from agentladder.store.codec import decode
from agentladder.store.nats.io import is_deleted, scan_page
from agentladder.store.records import OPEN_STATUSES, DeliberationDoc

__all__ = ["NEWEST", "PAGE", "RecordViews"]

PAGE = 5000
"""Messages read per ordered consumer."""
NEWEST = 10_000
"""Records whose sort keys the newest view keeps (about 150 bytes each)."""

_Key = tuple[float, str]  # (-created_at, id): the listing's order


class RecordViews:
    """The open records and the newest records' keys of one deliberation bucket."""

    def __init__(self, js: JetStreamContext, bucket: str, newest: int = NEWEST) -> None:
        self._js = js
        self._stream = f"KV_{bucket}"
        self._prefix = f"$KV.{bucket}."
        self._newest = newest
        self._after = 0  # the last stream sequence read
        self._open: dict[str, DeliberationDoc] = {}
        self._order: list[_Key] = []  # the newest view's keys, in order
        self._facts: dict[str, tuple[_Key, str, tuple[str, ...]]] = {}  # id -> key, status, agents
        self._whole = True  # the newest view holds every record
        self._reading = asyncio.Lock()
        self.read = 0
        """Messages read so far (what each refresh costs, for tests and benchmarks)."""

    async def refresh(self) -> None:
        """Read the messages written since the last refresh into the views."""
        async with self._reading:
            info = await self._js.stream_info(self._stream)
            if info.state.last_seq < self._after:  # the bucket was made again: read it all
                self._after = 0
                self._open.clear()
                self._order.clear()
                self._facts.clear()
                self._whole = True
            while True:
                page = await scan_page(
                    self._js, self._stream, f"{self._prefix}>", start=self._after + 1, limit=PAGE
                )
                for msg in page:
                    self._take(msg.subject.removeprefix(self._prefix), msg)
                    self._after = msg.metadata.sequence.stream
                self.read += len(page)
                if len(page) < PAGE:
                    return

    def open(self) -> list[DeliberationDoc]:
        """The records in an open status, as of the last refresh."""
        return list(self._open.values())

    def newest(
        self, limit: int, offset: int, statuses: Collection[str] | None, agent: str | None
    ) -> list[str] | None:
        """The ids of a listing's page, newest first, as of the last refresh; None when
        the page reaches past the newest view (the listing must read every record)."""
        wanted = offset + limit
        found: list[str] = []
        for key in self._order:
            _, status, agents = self._facts[key[1]]
            if (statuses is None or status in statuses) and (agent is None or agent in agents):
                found.append(key[1])
                if len(found) == wanted:
                    break
        if len(found) < wanted and not self._whole:
            return None
        return found[offset:]

    def _take(self, key: str, msg: Msg) -> None:
        """Update the views with the record ``key``'s newest message."""
        self._forget(key)
        if is_deleted(msg):
            return
        doc = decode(DeliberationDoc, msg.data, msg.subject)
        if doc.status in OPEN_STATUSES:
            self._open[key] = doc
        agents = doc.body.get("agents")
        names = tuple(a for a in agents if isinstance(a, str)) if isinstance(agents, list) else ()
        order = (-doc.created_at, key)
        if not self._whole and (not self._order or order > self._order[-1]):
            return  # older than the view's oldest, whose elders are not all kept
        bisect.insort(self._order, order)
        self._facts[key] = (order, doc.status, names)
        if len(self._order) > self._newest:  # the oldest leaves: the view is a prefix now
            self._whole = False
            del self._facts[self._order.pop()[1]]

    def _forget(self, key: str) -> None:
        """Take the record ``key`` out of both views (it is read again, or deleted)."""
        self._open.pop(key, None)
        facts = self._facts.pop(key, None)
        if facts is not None:
            del self._order[bisect.bisect_left(self._order, facts[0])]
