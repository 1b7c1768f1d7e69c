"""Run one HTTP call in a task of its own, cancelled at most once.

httpx (through httpcore and anyio) closes a connection whose request was cancelled in a
clean-up step that itself awaits. A second cancellation that lands during that step (a
caller's deadline expiring just after the call's own, or a caller cancelling twice)
skips the close: the connection stays open in the pool, and a server that never answers
keeps it open until the client closes. ``isolated`` keeps every cancellation of the
caller away from the call: the call's task is cancelled exactly once (on its deadline or
on the caller's first cancellation), the caller waits until its clean-up is done, and
then the caller's cancellation goes on as usual.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["isolated"]

T = TypeVar("T")


async def isolated(call: Coroutine[Any, Any, T], timeout_s: float) -> T:
    """``call``'s result; ``TimeoutError`` after ``timeout_s``; the caller stays cancellable."""
    task = asyncio.ensure_future(call)
    try:
        done, _ = await asyncio.wait((task,), timeout=timeout_s)
    except asyncio.CancelledError:
        await _cancel_and_wait(task)
        raise
    if not done:
        await _cancel_and_wait(task)
        raise TimeoutError(f"no answer in {timeout_s} s")
    return task.result()


async def _cancel_and_wait(task: asyncio.Future[Any]) -> None:
    """Cancel ``task`` once and wait for it to end, whatever cancels the waiter meanwhile;
    the waiter's own cancellation is raised afterwards."""
    task.cancel()
    cancelled = False
    while not task.done():
        try:
            await asyncio.wait((task,))
        except asyncio.CancelledError:
            cancelled = True
    if not task.cancelled():
        task.exception()  # retrieved: the call's own failure is not what the caller sees
    if cancelled:
        raise asyncio.CancelledError
