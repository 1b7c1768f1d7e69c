"""Instance leases in the JetStream KV bucket ``<prefix>_leases``.

Key: the holder (a service instance's id, a valid KV key); value: the time its lease
runs until, in seconds since the epoch, as text. Listing reads every key's last value
(one ordered consumer): one key per instance running or stopped in the last hour. A
renewal deletes keys whose lease ended more than an hour before.
"""

from __future__ import annotations

import contextlib

import nats.js.errors
from nats.js import JetStreamContext
from nats.js.kv import KeyValue

from agentladder.errors import InvalidInput
from agentladder.store.base import LEASE_KEPT_S
from agentladder.store.nats.config import kv_key_ok
from agentladder.store.nats.io import kv_values

__all__ = ["KvLeases"]


class KvLeases:
    """Renew, drop and list the instances' leases."""

    def __init__(self, js: JetStreamContext, kv: KeyValue, bucket: str) -> None:
        self._js = js
        self._kv = kv
        self._bucket = bucket

    async def _all(self) -> dict[str, float]:
        found = {}
        for holder, data in (await kv_values(self._js, self._bucket)).items():
            with contextlib.suppress(ValueError):  # not a lease of this store: ignored
                found[holder] = float(data)
        return found

    async def renew(self, holder: str, expires_at: float) -> None:
        """Insert or extend; forget leases that ended more than an hour before."""
        if not kv_key_ok(holder):
            raise InvalidInput("holder", holder, "must be a valid KV key")
        await self._kv.put(holder, repr(expires_at).encode())
        for stale, ends in (await self._all()).items():
            if ends < expires_at - LEASE_KEPT_S:
                await self.drop(stale)

    async def drop(self, holder: str) -> None:
        """End it now (a purge: no value left behind)."""
        if kv_key_ok(holder):
            with contextlib.suppress(nats.js.errors.KeyNotFoundError):
                await self._kv.purge(holder)

    async def live(self, now: float) -> frozenset[str]:
        """Those running past ``now``."""
        return frozenset(holder for holder, ends in (await self._all()).items() if ends > now)
