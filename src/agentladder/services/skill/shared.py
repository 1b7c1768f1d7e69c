"""``SharedRun``: one run of a job at a time, shared by every caller who asks meanwhile.

A fit of the skill log costs CPU and reads the whole log, so callers who want one now
(``POST /skills/fit``, ``?fresh=true``, the periodic fitter of ``serve``) never run two at
once and never queue one each. A caller who asks while nothing runs starts a run. A caller
who asks while one runs cannot be sure it covers what it stored just before (the run may
have read the log already): it waits for that run, then for the one after it, which
starts once the first ends and is shared by every caller who asked meanwhile. So at most
one run is in flight and one waits, whatever the number of callers.

A run, once started, goes on when its callers go away (a client that disconnects does
not cut a fit in the middle); ``close`` cancels what is in flight.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

from agentladder.services.passes import cancelled

__all__ = ["SharedRun"]

T = TypeVar("T")


class SharedRun(Generic[T]):
    """Runs ``job`` for its callers as the module says."""

    def __init__(self, job: Callable[[], Awaitable[T]]) -> None:
        self._job = job
        self._current: asyncio.Future[T] | None = None  # the run in flight
        self._next: asyncio.Future[T] | None = None  # the run after it, shared

    @property
    def running(self) -> bool:
        """Whether a run is in flight."""
        return self._current is not None and not self._current.done()

    async def __call__(self) -> T:
        """What a run that started after this call, or one in flight then and the run
        after it, gave; the run's exception if it failed."""
        current = self._current
        if current is None or current.done():
            task = self._current = self._start(self._job())
        else:
            if self._next is None:
                self._next = self._start(self._after(current))
            task = self._next
        return await asyncio.shield(task)

    def _start(self, run: Awaitable[T]) -> asyncio.Future[T]:
        task = asyncio.ensure_future(run)
        task.add_done_callback(_retrieved)  # every caller may have gone away
        return task

    async def _after(self, before: asyncio.Future[T]) -> T:
        await asyncio.wait((before,))
        self._current, self._next = self._next, None  # this run is now the one in flight
        return await self._job()

    async def close(self) -> None:
        """Cancel the runs in flight and waiting, and wait until they have ended."""
        await cancelled([task for task in (self._current, self._next) if task is not None])


def _retrieved(task: asyncio.Future[Any]) -> None:
    """Retrieve a run's exception (its callers got it; none may be left to)."""
    if not task.cancelled():
        task.exception()
