"""``FlushLoop``: what the gateway keeps in memory off the request path (its stats, its
answered requests, its clients' spend), written to the store every second.

One pass at a time calls ``flush``; its failures are logged by ``QuietPasses`` (a store
that is unavailable said once, any other failure with its traceback) and the next pass
tries again. ``close`` lets a write under way end (it is never cancelled midway, which
would drop the batch it took), then flushes once more.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from agentladder.errors import StoreUnavailable
from agentladder.services.passes import QuietPasses

__all__ = ["FlushLoop"]


class FlushLoop:
    """``flush`` every ``every_s`` seconds in the background (``now``: the first at once)."""

    def __init__(
        self, what: str, flush: Callable[[], Awaitable[object]], every_s: float,
        *, now: bool = False,
    ) -> None:  # fmt: skip
        self.flush = flush
        self.every_s = every_s
        self.now = now
        self.passes = QuietPasses(what, (StoreUnavailable,))
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start the loop (on the running event loop)."""
        self._stop.clear()
        self._task = asyncio.ensure_future(self._loop())

    async def _loop(self) -> None:
        if not self.now:
            await self._pause()
        while not self._stop.is_set():
            await self.passes.run(self.flush)
            await self._pause()

    async def _pause(self) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), self.every_s)

    async def close(self) -> None:
        """Stop the loop (a write under way ends first) and write what is left (its
        failure logged, as a pass's)."""
        if self._task is not None:
            self._stop.set()
            await self._task
            self._task = None
        await self.passes.run(self.flush)
