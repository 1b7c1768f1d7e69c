"""Following a stream in memory: an ephemeral ordered consumer that delivers the last
message of every subject (deliver policy last-per-subject), then every new one live; each
new message handed to ``apply`` once, in stream order, and the stream sequence applied so
far, which a reader waits for. The leaderboard index (``index.py``) and the KV mirrors
(``mirror.py``) are each one."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import DeliverPolicy

__all__ = ["Follower"]

_IDLE_HEARTBEAT = 2.0


class Follower:
    """A stream's subjects ``subjects`` followed from their last messages on."""

    def __init__(
        self,
        js: JetStreamContext,
        stream: str,
        subjects: str,
        apply: Callable[[int, Msg], None],
    ) -> None:
        self._js = js
        self._stream = stream
        self._subjects = subjects
        self._apply = apply
        self._applied = 0
        self._progress = asyncio.Condition()
        self._sub: JetStreamContext.PushSubscription | None = None

    @property
    def applied(self) -> int:
        """The stream sequence of the last message applied (0: none yet)."""
        return self._applied

    @property
    def running(self) -> bool:
        """Whether it follows the stream (started, not stopped)."""
        return self._sub is not None

    async def start(self) -> None:
        """Subscribe: every subject's last message first, then live updates."""
        self._sub = await self._js.subscribe(
            self._subjects,
            stream=self._stream,
            cb=self._on_message,
            ordered_consumer=True,
            deliver_policy=DeliverPolicy.LAST_PER_SUBJECT,
            idle_heartbeat=_IDLE_HEARTBEAT,
        )

    async def stop(self) -> None:
        """Unsubscribe; nothing more is applied."""
        sub, self._sub = self._sub, None
        if sub is not None:
            await sub.unsubscribe()

    async def _on_message(self, msg: Msg) -> None:
        seq = msg.metadata.sequence.stream
        if seq <= self._applied:  # an ordered consumer reset may deliver again
            return
        self._apply(seq, msg)
        self._applied = seq
        async with self._progress:
            self._progress.notify_all()

    async def reached(self, seq: int, timeout: float) -> bool:
        """Whether every message up to ``seq`` is applied, waiting up to ``timeout`` (no at
        once when stopped short of it)."""
        if self._applied >= seq:
            return True
        if self._sub is None:
            return False
        try:
            async with self._progress:
                await asyncio.wait_for(
                    self._progress.wait_for(lambda: self._applied >= seq), timeout
                )
        except TimeoutError:
            return False
        return True
