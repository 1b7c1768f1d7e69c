"""One time limit for many concurrent calls: what ``asyncio.timeout`` does per call, on
one timer.

A round runs dozens of provider calls at once, each limited to the same ``timeout_s``
from its own start. ``asyncio.timeout`` costs each call a context manager, a timer
scheduled and cancelled, and was about a fifth of a round's own CPU. Here the calls in
flight are kept in start order (so in deadline order) and one timer, armed at the
earliest deadline, cancels each call that is due, exactly once, as ``asyncio.timeout``
does: the call's task is cancelled; when the call ends, that cancellation is withdrawn
(``Task.uncancel``) and, unless another one is pending, its ``CancelledError`` is the
timeout.

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
from typing import Any

__all__ = ["Deadlines"]

_Task = asyncio.Task[Any]


class Deadlines:
    """Calls awaited in their tasks, each cancelled once ``timeout_s`` after its start."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self._due: dict[_Task, tuple[float, int]] = {}  # in flight: (deadline, cancelling)
        self._expired: dict[_Task, int] = {}  # cancelled on their deadline, not finished
        self._timer: asyncio.TimerHandle | None = None

    def start(self) -> _Task:
        """Watch the call the current task awaits next; its task, for ``finish``."""
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("Deadlines.start outside a task")
        loop = task.get_loop()
        due = loop.time() + self.timeout_s
        if task in self._due or task in self._expired:
            raise RuntimeError("one call at a time per task")
        self._due[task] = (due, task.cancelling())
        if self._timer is None:
            self._timer = loop.call_at(due, self._expire)
        return task

    def finish(self, task: _Task) -> bool:
        """The call watched in ``task`` ended (however). True when its deadline cancelled
        it and no other cancellation is pending: its ``CancelledError`` is a timeout."""
        if self._due.pop(task, None) is not None:
            if not self._due and self._timer is not None:
                self._timer.cancel()
                self._timer = None
            return False
        cancelling = self._expired.pop(task)
        return task.uncancel() <= cancelling

    def _expire(self) -> None:
        """Cancel every call that is due, once; arm the timer for the next deadline."""
        self._timer = None
        while self._due:
            task, (due, cancelling) = next(iter(self._due.items()))
            loop = task.get_loop()
            if due > loop.time():
                self._timer = loop.call_at(due, self._expire)
                return
            del self._due[task]
            self._expired[task] = cancelling
            task.cancel()
