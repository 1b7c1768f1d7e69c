"""The gateway's pending checks in the JetStream KV bucket ``<prefix>_checks``
(``store/checks.py``): key the contract id, value the record's JSON, its revision the
entry's. A create is ``create`` (refused when the key holds a value), a replacement an
``update`` at the revision read: two instances taking over the same check cannot both
win. The bucket is created on first use.
"""

from __future__ import annotations

import asyncio

import nats.js.errors
from nats.js import JetStreamContext
from nats.js.kv import KeyValue

from agentladder.errors import RevisionConflict
from agentladder.store.checks import PendingCheck
from agentladder.store.codec import decode
from agentladder.store.nats.config import kv_key_ok
from agentladder.store.nats.io import LazyKv
from agentladder.store.records import Versioned

__all__ = ["KvChecks"]


class KvChecks:
    """Put, list and delete the pending checks."""

    def __init__(self, js: JetStreamContext, bucket: str, replicas: int) -> None:
        self.bucket = bucket
        self._open = LazyKv(js, bucket, replicas).open

    async def put(self, check: PendingCheck, revision: int) -> int:
        """Create (revision 0) or update at ``revision``; the new revision."""
        key = check.contract_id
        if not kv_key_ok(key):
            raise ValueError(f"contract_id {key!r} cannot be a KV key")
        kv = await self._open()
        value = check.model_dump_json().encode()
        try:
            if revision == 0:
                return int(await kv.create(key, value))
            return int(await kv.update(key, value, last=revision))
        except nats.js.errors.KeyWrongLastSequenceError:
            raise RevisionConflict(f"{self.bucket}/{key}", revision) from None

    async def _get(self, kv: KeyValue, key: str) -> Versioned[PendingCheck] | None:
        try:
            entry = await kv.get(key)
        except (nats.js.errors.KeyNotFoundError, nats.js.errors.KeyDeletedError):
            return None
        if entry.value is None:
            return None
        found = decode(PendingCheck, entry.value, f"{self.bucket}/{key}")
        return Versioned(found, int(entry.revision or 0))

    async def list(self, limit: int) -> list[Versioned[PendingCheck]]:
        """Every key read, the earliest answered ``limit`` kept."""
        kv = await self._open()
        try:
            keys = await kv.keys()
        except nats.js.errors.NoKeysError:
            return []
        found = await asyncio.gather(*(self._get(kv, key) for key in keys))
        kept = [entry for entry in found if entry is not None]
        kept.sort(key=lambda entry: (entry.value.at, entry.value.contract_id))
        return kept[:limit]

    async def delete(self, contract_id: str) -> None:
        """Delete the key (nothing when absent)."""
        if not kv_key_ok(contract_id):
            return
        kv = await self._open()
        await kv.delete(contract_id)
