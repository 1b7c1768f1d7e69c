"""The gateway clients' spend in the JetStream KV bucket ``<prefix>_spend``.

Key: ``<period key>.<client>`` (``day-2026-12-05.team-a``; a client whose name is not
one subject token, with a dot in it, is written ``=`` and its hex digits). Value: the
nano-dollars spent, as decimal text. An addition reads the entry and writes the sum
compare-and-set on its revision (``create`` when absent), retried on a conflict: two
instances adding at once both count. The bucket is created on first use.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Collection, Mapping

import nats.js.errors
from nats.js import JetStreamContext
from nats.js.kv import KeyValue

from agentladder.errors import CorruptRecord, RevisionConflict
from agentladder.store.nats.io import LazyKv
from agentladder.store.retry import retry_on_conflict
from agentladder.store.spend import SpendKey

__all__ = ["KvSpend", "spend_key"]

_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,64}")


def spend_key(client: str, period: str) -> str:
    """The KV key of a client's spend in a period."""
    name = client if _TOKEN.fullmatch(client) else "=" + client.encode().hex()
    return f"{period}.{name}"


class KvSpend:
    """Add to and read the clients' spend."""

    def __init__(self, js: JetStreamContext, bucket: str, replicas: int) -> None:
        self._bucket = bucket
        self._open = LazyKv(js, bucket, replicas).open

    async def _value(self, kv: KeyValue, key: str) -> tuple[int, int] | None:
        """The key's nano-dollars and revision, or None."""
        try:
            entry = await kv.get(key)
        except (nats.js.errors.KeyNotFoundError, nats.js.errors.KeyDeletedError):
            return None
        raw = (entry.value or b"").decode(errors="replace")
        if not raw.isdigit():
            raise CorruptRecord(f"{self._bucket}/{key}", "not a whole number of nano-dollars")
        return int(raw), int(entry.revision or 0)

    async def _add(self, kv: KeyValue, key: str, nano: int) -> None:
        async def attempt() -> None:
            found = await self._value(kv, key)
            try:
                if found is None:
                    await kv.create(key, str(nano).encode())
                else:
                    await kv.update(key, str(found[0] + nano).encode(), last=found[1])
            except nats.js.errors.KeyWrongLastSequenceError:
                raise RevisionConflict(f"{self._bucket}/{key}", found[1] if found else 0) from None

        await retry_on_conflict(attempt, op="client spend")

    async def add(self, charges: Mapping[SpendKey, int]) -> None:
        """Each charge added to its key, the keys at once."""
        if not charges:
            return
        kv = await self._open()
        await asyncio.gather(
            *(self._add(kv, spend_key(*key), nano) for key, nano in charges.items() if nano)
        )

    async def get(self, keys: Collection[SpendKey]) -> dict[SpendKey, int]:
        """The keys that have a value."""
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return {}
        kv = await self._open()
        found = await asyncio.gather(*(self._value(kv, spend_key(*key)) for key in wanted))
        return {key: value[0] for key, value in zip(wanted, found, strict=True) if value}
