"""One time limit for many concurrent calls: what ``asyncio.timeout`` does per call, on
one timer.

A round runs dozens of provider calls at once, each limited to ``timeout_s`` from its
own start. ``asyncio.timeout`` costs each call a context manager, a timer scheduled and
cancelled, and was about a fifth of a round's own CPU. Here the calls in flight are kept
in a heap by deadline and one timer, armed at the earliest deadline, cancels each call
that is due, exactly once, as ``asyncio.timeout`` does: the call's task is cancelled;
when the call ends, that cancellation is withdrawn (``Task.uncancel``) and, unless
another one is pending, its ``CancelledError`` is the timeout. A retry is watched up to
what is left of its call's deadline (``start(due=...)``), not a fresh ``timeout_s``: one
call, its retries and its waits included, never outlasts its deadline.

    task = deadlines.start()
    try:
        try:
            value = await call()
        finally:
            expired = deadlines.finish(task)
    except asyncio.CancelledError:
        if not expired:
            raise
        ...  # timed out
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from typing import Any

__all__ = ["Deadlines"]

_Task = asyncio.Task[Any]


class Deadlines:
    """Calls awaited in their tasks, each cancelled once at its deadline (``timeout_s``
    after its start unless given)."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self._due: dict[_Task, tuple[float, int, int]] = {}  # in flight: (due, cancelling, n)
        self._heap: list[tuple[float, int, _Task]] = []  # (due, n, task); stale ones skipped
        self._expired: dict[_Task, int] = {}  # cancelled on their deadline, not finished
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0.0
        self._count = itertools.count()

    def start(self, due: float | None = None) -> _Task:
        """Watch the call the current task awaits next, until ``due`` (the loop's time;
        default ``timeout_s`` from now); its task, for ``finish``."""
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("Deadlines.start outside a task")
        loop = task.get_loop()
        if due is None:
            due = loop.time() + self.timeout_s
        if task in self._due or task in self._expired:
            raise RuntimeError("one call at a time per task")
        n = next(self._count)
        self._due[task] = (due, task.cancelling(), n)
        heapq.heappush(self._heap, (due, n, task))
        if self._timer is None or due < self._timer_at:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = loop.call_at(due, self._expire)
            self._timer_at = due
        return task

    def finish(self, task: _Task) -> bool:
        """The call watched in ``task`` ended (however). True when its deadline cancelled
        it and no other cancellation is pending: its ``CancelledError`` is a timeout."""
        if self._due.pop(task, None) is not None:
            if not self._due:
                self._heap.clear()
                if self._timer is not None:
                    self._timer.cancel()
                    self._timer = None
            return False
        cancelling = self._expired.pop(task)
        return task.uncancel() <= cancelling

    def _expire(self) -> None:
        """Cancel every call that is due, once; arm the timer for the next deadline."""
        self._timer = None
        while self._heap:
            due, n, task = self._heap[0]
            found = self._due.get(task)
            if found is None or found[2] != n:  # finished, or watched again since
                heapq.heappop(self._heap)
                continue
            loop = task.get_loop()
            if due > loop.time():
                self._timer = loop.call_at(due, self._expire)
                self._timer_at = due
                return
            heapq.heappop(self._heap)
            del self._due[task]
            self._expired[task] = found[1]
            task.cancel()
