"""Virtual time for tests: run a coroutine on an event loop whose clock moves only when
every task waits, straight to the next timer.

A deadline of 0.5 s then ends at loop time 0.5 exactly, however loaded the machine is, and
takes no wall time: a test asserts on ``loop.time()`` instead of the wall clock. Only for
code that waits on timers (``asyncio.sleep``, ``asyncio.timeout``, ``call_at``): a real
socket or thread answers in wall time, which this clock does not wait for (a test with
one runs on a real loop and checks events instead).

How: the loop asks its selector for I/O with a timeout, the time to its next timer (0 when
a callback is ready). The selector here polls without blocking; when no I/O is ready it
moves the clock by that timeout instead of sleeping, so the loop finds the timer due.
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0


class _JumpingSelector(selectors.DefaultSelector):
    """Never sleeps for a timer: polls, and when nothing is ready moves the clock instead."""

    def __init__(self, clock: _Clock) -> None:
        super().__init__()
        self.clock = clock

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        ready = super().select(0)
        if ready or timeout == 0:
            return ready
        if timeout is None:  # no timer at all: only I/O (a thread's callback) can wake the loop
            return super().select(None)
        self.clock.now += timeout  # every task waits: on to the next timer
        return []


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An event loop whose ``time()`` starts at 0 and jumps to each next timer when idle."""

    def __init__(self) -> None:
        self._clock = _Clock()
        super().__init__(_JumpingSelector(self._clock))

    def time(self) -> float:
        return self._clock.now


def run_virtual(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on a ``VirtualTimeLoop``."""
    with asyncio.Runner(loop_factory=VirtualTimeLoop) as runner:
        return runner.run(main)


def now() -> float:
    """The running loop's clock: on virtual time, the seconds since ``run_virtual`` began."""
    return asyncio.get_running_loop().time()
