"""A background pass repeated forever, whose failures are logged without flooding the log.

A pass that fails for a known, passing cause (the store unavailable, a lost race) says so
once, with the cause, and once more when it works again; any other failure is logged with
its traceback each time. The next pass always tries again.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)


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
