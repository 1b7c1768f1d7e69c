"""A background pass repeated forever, whose failures are logged without flooding the log.

A pass that fails for a known, passing cause (the store unavailable, a lost race) says so
once, with the cause, and once more when it works again; any other failure is logged with
its traceback each time. The next pass always tries again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection
from typing import Any

log = logging.getLogger(__name__)

CANCEL_AGAIN_S = 1.0
"""How often ``cancelled`` cancels again a task that went on."""


class QuietPasses:
    """Runs one pass at a time of ``what`` (a phrase: "the skill fit"), logging as above."""

    def __init__(self, what: str, waits_for: tuple[type[Exception], ...]) -> None:
        self.what = what
        self.waits_for = waits_for
        self.waiting = False  # the last pass failed for a known cause: said once

    async def run(self, one_pass: Callable[[], Awaitable[object]]) -> bool:
        """Run ``one_pass``; whether it worked."""
        try:
            await one_pass()
        except self.waits_for as error:
            if not self.waiting:
                log.warning("%s waits: %s", self.what, error)
            self.waiting = True
            return False
        except Exception:
            log.exception("%s failed", self.what)
            return False
        if self.waiting:
            log.warning("%s resumed", self.what)
        self.waiting = False
        return True


async def cancelled(
    tasks: Collection[asyncio.Future[Any]], again_s: float = CANCEL_AGAIN_S
) -> None:
    """Cancel ``tasks`` and wait until every one has ended, cancelling again every
    ``again_s`` one that goes on. A cancellation can be lost inside a library's wait
    (Python 3.11's ``asyncio.wait_for`` returns the inner result when it arrives with the
    cancellation), and a background loop that lost one went on to its next pause, past a
    stop's bound (``tests/services/test_passes_cancelled.py``). What the tasks raised is
    retrieved (not logged: they were stopped)."""
    pending = {task for task in tasks if not task.done()}
    while pending:
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=again_s)
    for task in tasks:
        if not task.cancelled():
            task.exception()
