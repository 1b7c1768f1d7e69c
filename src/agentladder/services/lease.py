"""This service instance's lease: how other instances (and this one after a restart) know
it is alive.

An instance holds a lease under its id in the store and renews it every third of
``lease_s``. A deliberation records the instance that runs it (``runner``); once that
instance's lease has run out, recovery marks the deliberation failed at once instead of
waiting for the longest a deliberation can run (``deliberations/recovery.py``). A clean
stop drops the lease, so what the stopped instance left is taken over at the next pass.

Instances compare lease times with their own clocks: clocks apart by more than a few
seconds shorten or lengthen a lease by as much, which ``lease_s`` (30 s by default) is
meant to absorb.
"""

from __future__ import annotations

import asyncio
import logging

from agentladder.errors import StoreUnavailable
from agentladder.services.clock import Clock
from agentladder.services.passes import QuietPasses, cancelled
from agentladder.store.base import Store

__all__ = ["Lease"]

log = logging.getLogger(__name__)


class Lease:
    """Acquire, keep renewing, and drop the lease of ``holder``."""

    def __init__(self, store: Store, holder: str, clock: Clock, lease_s: float) -> None:
        self.store = store
        self.holder = holder
        self.clock = clock
        self.lease_s = lease_s
        self._task: asyncio.Task[None] | None = None

    async def renew(self) -> None:
        """Extend the lease to ``lease_s`` from now."""
        await self.store.renew_lease(self.holder, self.clock.now().timestamp() + self.lease_s)

    async def start(self) -> None:
        """Take the lease now, then renew it in the background until ``stop``."""
        await self.renew()

        async def keep() -> None:
            passes = QuietPasses(f"the lease of instance {self.holder}", (StoreUnavailable,))
            while True:
                await asyncio.sleep(self.lease_s / 3)
                await passes.run(self.renew)

        self._task = asyncio.ensure_future(keep())

    async def stop(self) -> None:
        """Stop renewing and drop the lease (a store already gone is only logged)."""
        if self._task is not None:
            await cancelled([self._task])
            self._task = None
        try:
            await self.store.drop_lease(self.holder)
        except StoreUnavailable as error:  # said already, in one line; it runs out by itself
            log.warning("the lease of instance %s is left to run out: %s", self.holder, error)
        except Exception:  # it runs out by itself; anything else is a defect: its traceback
            log.warning("dropping the lease of instance %s failed", self.holder, exc_info=True)
