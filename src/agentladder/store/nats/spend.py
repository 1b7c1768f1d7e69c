"""The gateway clients' spend in the JetStream KV bucket ``<prefix>_spend``.

Key: ``<period key>.<client>`` (``day-2026-12-05.team-a``; a client whose name is not
one subject token, with a dot in it, is written ``=`` and its hex digits). Value: the
nano-dollars spent, as decimal text. An addition reads the entry and writes the sum
compare-and-set on its revision (``create`` when absent), retried on a conflict: two
instances adding at once both count. The bucket is created on first use.

A budgeted client's requests in flight hold money under ``held.<period key>.<client>``:
a JSON object of hold id to ``[nano-dollars, expires_at]``. A hold is reserved by reading
that entry (with its revision), then the spend, then writing the entry with the new hold
compare-and-set on the revision read, when ``domain.budget.refusal`` grants it; a settle
adds the cost to the spend first, then drops the hold (compare-and-set, retried). So a
reserve that read the spend before a settle added to it still sees that settle's hold
(counted twice for a moment, never not at all), and one that read the holds before a
settle dropped one fails its write and reads again.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Collection, Mapping

import nats.errors
import nats.js.errors
from nats.js import JetStreamContext
from nats.js.kv import KeyValue

from agentladder.domain.budget import live_holds, refusal
from agentladder.errors import AgentladderError, CorruptRecord, RevisionConflict
from agentladder.store.nats.io import LazyKv
from agentladder.store.retry import retry_on_conflict
from agentladder.store.spend import Hold, Reserved, SpendKey

__all__ = ["KvSpend", "hold_key", "spend_key"]

log = logging.getLogger(__name__)

_Holds = dict[str, tuple[int, float]]

_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,64}")


def spend_key(client: str, period: str) -> str:
    """The KV key of a client's spend in a period."""
    name = client if _TOKEN.fullmatch(client) else "=" + client.encode().hex()
    return f"{period}.{name}"


def hold_key(client: str, period: str) -> str:
    """The KV key of the holds of a client's requests in flight, in a period."""
    return "held." + spend_key(client, period)


def _holds(raw: bytes, where: str) -> _Holds:
    """A holds entry's value, or ``CorruptRecord``."""
    try:
        found = json.loads(raw or b"{}")
        return {str(hold): (int(nano), float(until)) for hold, (nano, until) in dict(found).items()}
    except (ValueError, TypeError) as error:
        raise CorruptRecord(where, f"not an object of [nano, expires_at]: {error}") from None


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

    async def _read_holds(self, kv: KeyValue, key: str) -> tuple[_Holds, int | None]:
        """The holds under ``key`` and the entry's revision (None: absent)."""
        try:
            entry = await kv.get(key)
        except (nats.js.errors.KeyNotFoundError, nats.js.errors.KeyDeletedError):
            return {}, None
        return _holds(entry.value or b"", f"{self._bucket}/{key}"), int(entry.revision or 0)

    async def _write_holds(self, kv: KeyValue, key: str, holds: _Holds, last: int | None) -> None:
        """``holds`` written compare-and-set on ``last`` (None: created)."""
        raw = json.dumps({hold: [nano, until] for hold, (nano, until) in holds.items()})
        try:
            if last is None:
                await kv.create(key, raw.encode())
            else:
                await kv.update(key, raw.encode(), last=last)
        except nats.js.errors.KeyWrongLastSequenceError:
            raise RevisionConflict(f"{self._bucket}/{key}", last or 0) from None

    async def reserve(self, hold: Hold, limit_usd: float, now: float) -> Reserved:
        """The holds read, then the spend, the hold added compare-and-set when granted."""
        kv = await self._open()
        key = hold_key(*hold.key)

        async def attempt() -> Reserved:
            found, revision = await self._read_holds(kv, key)
            value = await self._value(kv, spend_key(*hold.key))
            spent = 0 if value is None else value[0]
            holds = live_holds(found, now)
            held = sum(nano for nano, _ in holds.values())
            refused = refusal(spent, held, hold.nano, limit_usd)
            if refused is None:
                holds[hold.id] = (hold.nano, hold.expires_at)
                await self._write_holds(kv, key, holds, revision)
            return Reserved(refused, spent, held)

        return await retry_on_conflict(attempt, op="client hold")

    async def release(self, hold: Hold) -> None:
        """The hold dropped from its entry, compare-and-set (nothing when it is gone)."""
        kv = await self._open()
        key = hold_key(*hold.key)

        async def attempt() -> None:
            found, revision = await self._read_holds(kv, key)
            if hold.id in found:
                del found[hold.id]
                await self._write_holds(kv, key, found, revision)

        await retry_on_conflict(attempt, op="client hold")

    async def settle(self, hold: Hold, charges: Mapping[SpendKey, int]) -> None:
        """The charges added, then the hold dropped; a failure to drop it is logged (the
        hold counts until it expires), not raised: the charges are in."""
        await self.add(charges)
        try:
            await self.release(hold)
        except (AgentladderError, nats.errors.Error, TimeoutError) as error:
            log.warning("a settled hold of %r stays until it expires: %s", hold.key[0], error)
