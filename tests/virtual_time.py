"""Virtual time for tests: run a coroutine on an event loop whose clock moves only when
every task waits, straight to the next timer (``looptime``).

A deadline of 0.5 s then ends at loop time 0.5 exactly, however loaded the machine is, and
takes no wall time: a test asserts on ``loop.time()`` instead of the wall clock. Only for
code that waits on timers (``asyncio.sleep``, ``asyncio.timeout``, ``call_at``): a real
socket or thread answers in wall time, which this clock does not wait for.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

import looptime

T = TypeVar("T")


def virtual_loop() -> asyncio.AbstractEventLoop:
    """A new event loop on virtual time, its clock at 0."""
    return looptime.new_event_loop(start=0.0)


def run_virtual(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on a loop on virtual time (its clock starting at 0)."""
    with asyncio.Runner(loop_factory=virtual_loop) as runner:
        return runner.run(main)


def now() -> float:
    """The running loop's clock: on virtual time, the seconds since ``run_virtual`` began."""
    return asyncio.get_running_loop().time()
