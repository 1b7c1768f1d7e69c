"""A KV bucket's latest entries, kept in memory by each instance: reads of several keys in
one request.

An ephemeral ordered consumer on ``$KV.<bucket>.>`` delivers the last message of every
key (deliver policy last-per-subject), then every new one live; each replaces its key's
entry (stream sequence and raw bytes, decoded by the reader), a delete or purge marker
drops it. A read of several keys first asks the stream for its last message's sequence
(one request), waits until the mirror has applied it, then answers every key from memory:
each as a read of the key at that moment would (every write acknowledged before the read
began is seen, its sequence being the entry's revision), an absent key absent. A mirror
that does not catch up in time says so, and the reader reads the keys one by one.

Used for the rank stats and the registrations (``NatsStore.get_many_stats``,
``get_many_registrations``): a deliberation reads five agents' stats to admit them and
again to rank them, and their registrations to know who is online. The profiles come the
same way from the leaderboard index (``index.py``), which keeps each agent's last event.
Memory: the bytes of each key's latest value (about 300 bytes a rank entry, 600 a
registration); the rank bucket's markers (``=applied=...``, one a ranking) are counted,
not kept. Until the entries delivered at the start are all applied (a bucket of a million
markers takes seconds), the reads go key by key.
"""

from __future__ import annotations

import logging

from nats.aio.msg import Msg
from nats.js import JetStreamContext

from agentladder.store.nats.follower import Follower
from agentladder.store.nats.io import is_deleted, last_msg

__all__ = ["KvMirror"]

log = logging.getLogger(__name__)


class KvMirror:
    """The latest entry of every key of one KV bucket."""

    def __init__(self, js: JetStreamContext, bucket: str, skip: str | None = None) -> None:
        self._js = js
        self._stream = f"KV_{bucket}"
        self._prefix = f"$KV.{bucket}."
        self._skip = skip  # keys with this prefix are not kept (the rank bucket's markers)
        self._entries: dict[str, tuple[int, bytes]] = {}
        self._loaded = False  # the keys' latest entries delivered at the start all applied
        self._loaded_at = 0  # the bucket's last sequence when the mirror started
        self._follower = Follower(js, self._stream, f"{self._prefix}>", self._on_message)

    async def start(self) -> None:
        """Subscribe: every key's latest entry first, then live updates."""
        self._loaded_at = await self._last_seq()
        self._loaded = self._loaded_at == 0
        await self._follower.start()

    async def stop(self) -> None:
        """Unsubscribe; the mirror no longer changes, and ``caught_up`` says no."""
        await self._follower.stop()

    def _on_message(self, seq: int, msg: Msg) -> None:
        key = msg.subject.removeprefix(self._prefix)
        if is_deleted(msg):
            self._entries.pop(key, None)
        elif self._skip is None or not key.startswith(self._skip):
            self._entries[key] = (seq, msg.data)
        self._loaded = self._loaded or seq >= self._loaded_at

    async def caught_up(self, timeout: float) -> bool:
        """Whether the mirror has applied every message the bucket held when asked (one
        request for the last one's sequence), waiting up to ``timeout``; no at once while
        the keys' entries delivered at the start are still coming (a bucket with many
        keys: the reader reads its few keys meanwhile), or once stopped."""
        if not self._loaded or not self._follower.running:
            return False
        seq = await self._last_seq()
        if await self._follower.reached(seq, timeout):
            return True
        log.warning("KV mirror of %s at %d, not %d after %s s", self._stream,
                    self._follower.applied, seq, timeout)  # fmt: skip
        return False

    async def _last_seq(self) -> int:
        last = await last_msg(self._js, self._stream, f"{self._prefix}>")
        return 0 if last is None else int(last.seq or 0)

    def __len__(self) -> int:
        """The keys kept."""
        return len(self._entries)

    def get(self, key: str) -> tuple[int, bytes] | None:
        """The key's latest entry applied here (stream sequence, bytes), or None."""
        return self._entries.get(key)
