"""Registrations and deliberation records in two JetStream KV buckets.

- ``<prefix>_registrations``: key agent id, value the ``Registration`` JSON.
- ``<prefix>_deliberations``: key deliberation id (it must be a valid KV key), value the
  ``DeliberationDoc`` JSON. Listing reads every entry (one ordered consumer, last value
  per key) and sorts newest first in memory: fine for thousands, not for millions. An
  agent's deliberations are found the same way, filtered by the body's ``agents``, unless
  the views kept as the bucket grows answer (``record_views.py``): the records in an open
  status (what recovery looks for), and the newest records' keys (a page of the newest,
  the dashboard's, read by key); then a listing reads only what was written since the
  last.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Iterable, Sequence
from typing import TypeVar

import nats.js.errors
from nats.js import JetStreamContext
from nats.js.kv import KeyValue
from pydantic import BaseModel

from agentladder.errors import InvalidInput
from agentladder.store.codec import decode
from agentladder.store.nats.config import kv_key_ok
from agentladder.store.nats.io import is_deleted, kv_values, scan_page
from agentladder.store.nats.record_views import RecordViews
from agentladder.store.records import OPEN_STATUSES, DeliberationDoc, Registration, took_part

__all__ = ["KvDocuments"]

M = TypeVar("M", bound=BaseModel)


async def _get(kv: KeyValue, bucket: str, model: type[M], key: str) -> M | None:
    if not kv_key_ok(key):
        return None
    try:
        entry = await kv.get(key)
    except (nats.js.errors.KeyNotFoundError, nats.js.errors.KeyDeletedError):
        return None
    return decode(model, entry.value or b"", f"{bucket}/{key}")


async def _all(js: JetStreamContext, bucket: str, model: type[M]) -> dict[str, M]:
    values = await kv_values(js, bucket)
    return {key: decode(model, data, f"{bucket}/{key}") for key, data in values.items()}


def _wanted(doc: DeliberationDoc, statuses: Collection[str] | None, agent: str | None) -> bool:
    return (statuses is None or doc.status in statuses) and took_part(doc, agent)


class KvDocuments:
    """The registry and the deliberation records."""

    def __init__(
        self,
        js: JetStreamContext,
        registrations: KeyValue,
        deliberations: KeyValue,
        registrations_bucket: str,
        deliberations_bucket: str,
    ) -> None:
        self._js = js
        self._registrations = registrations
        self._deliberations = deliberations
        self._registrations_bucket = registrations_bucket
        self._deliberations_bucket = deliberations_bucket
        self.views = RecordViews(js, deliberations_bucket)

    async def put_registration(self, registration: Registration) -> None:
        """Insert or replace (last writer wins)."""
        key = registration.agent_id
        if not kv_key_ok(key):
            raise InvalidInput("agent_id", key, "must be a valid agent name")
        await self._registrations.put(key, registration.model_dump_json().encode())

    async def get_registration(self, agent_id: str) -> Registration | None:
        """One registration, or None."""
        return await _get(self._registrations, self._registrations_bucket, Registration, agent_id)

    async def list_registrations(self) -> list[Registration]:
        """Every registration by agent id."""
        found = await _all(self._js, self._registrations_bucket, Registration)
        return [value for _, value in sorted(found.items())]

    async def put_deliberation(self, doc: DeliberationDoc) -> None:
        """Insert or replace (last writer wins); the id must be a valid KV key."""
        if not kv_key_ok(doc.id):
            raise InvalidInput(
                "deliberation_id", doc.id, "must be 1 to 1024 of A-Z a-z 0-9 - _ = / ."
            )
        await self._deliberations.put(doc.id, doc.model_dump_json().encode())

    async def get_deliberation(self, deliberation_id: str) -> DeliberationDoc | None:
        """One record, or None."""
        return await _get(
            self._deliberations, self._deliberations_bucket, DeliberationDoc, deliberation_id
        )

    async def list_deliberations(
        self,
        limit: int,
        offset: int,
        statuses: Collection[str] | None = None,
        agent: str | None = None,
    ) -> Sequence[DeliberationDoc]:
        """Newest first (created_at descending, then id); only ``statuses`` if given, only
        those ``agent`` took part in if given: from the views (``record_views.py``) when
        they can answer, else every entry read."""
        await self.views.refresh()
        if statuses is not None and OPEN_STATUSES.issuperset(statuses):
            found: Iterable[DeliberationDoc] = self.views.open()
        else:
            ids = self.views.newest(limit, offset, statuses, agent)
            if ids is not None:  # the page's records, read by key (as they are now)
                page = await asyncio.gather(*(self.get_deliberation(i) for i in ids))
                return [d for d in page if d is not None and _wanted(d, statuses, agent)]
            found = (await _all(self._js, self._deliberations_bucket, DeliberationDoc)).values()
        docs = sorted(
            (d for d in found if _wanted(d, statuses, agent)), key=lambda d: (-d.created_at, d.id)
        )
        return docs[offset : offset + limit]

    async def deliberations_after(
        self, after: int, limit: int
    ) -> list[tuple[int, DeliberationDoc]]:
        """Up to ``limit`` records after stream sequence ``after`` of the bucket's stream,
        with their sequences: in the order last written (the bucket keeps one message per
        key, so a record rewritten meanwhile is met again at its new place)."""
        bucket = self._deliberations_bucket
        prefix = f"$KV.{bucket}."
        messages = await scan_page(
            self._js, f"KV_{bucket}", f"{prefix}>", start=after + 1, limit=limit
        )
        return [
            (m.metadata.sequence.stream, decode(DeliberationDoc, m.data, m.subject))
            for m in messages
            if not is_deleted(m)
        ]
