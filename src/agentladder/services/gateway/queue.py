"""``CheckQueue``: the gateway's checks, kept in the store until they are done
(docs/gateway.md, "Checks").

``add`` writes a decided check to the store (``store/checks.py``), owned by this instance,
before the answer goes on, then queues it; ``workers`` tasks run the queued checks (the
``run`` given: judge, judgment, verdict). At most ``queue_size`` checks are outstanding
here (queued, being judged or waiting for a retry); past that a check is **backlogged**:
written to the store only, for a later ``pickup`` to take when there is room (counted
``backlogged``), up to ``BACKLOG`` times ``queue_size`` of them. A check is promised to
the caller only when it can be kept: ``room`` says whether one more can, and a stream's
check, stored at its end, holds its place from the promise (``promise``) to its ``add``.
Past both bounds no check is promised (the caller is told ``no``; counted ``dropped``). A
store that cannot be written keeps a promised check in memory only (a crash loses it; said
in the log).

Once its judgment and verdict are stored, the check is deleted (``passed`` or ``failed``).
A failed attempt (the judge down or answering no verdict, the store unavailable, a verdict
not stored) is retried after ``retry_s`` seconds, doubling up to 64 times that, the
attempt counted and the reason kept in the store (``retried``; a judge's Retry-After, when
longer, is waited instead); after ``attempts`` failed
attempts, or once the next one would come later than ``retention_s`` after the answer,
the check is given up and deleted (``error``).

``pickup`` (at the start, then every ``sweep_s``) takes over the stored checks that no
live instance runs: this instance's before a restart, and those of instances whose lease
ran out (``services/lease.py``), by compare-and-set on the owner (two instances cannot
both take one); counted ``recovered``. One older than ``retention_s`` is deleted
(``error``). At a stop, the queued checks may finish within the grace; the others stay in
the store for the next start (``deferred``; ``dropped`` for one never stored).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from agentladder.errors import ProviderError, RevisionConflict, StoreUnavailable
from agentladder.redaction import scrub
from agentladder.services.gateway.judge import JudgeSettings
from agentladder.services.passes import QuietPasses, cancelled
from agentladder.store.base import Store
from agentladder.store.checks import PendingCheck

__all__ = ["MAX_BACKOFF", "CheckQueue", "Entry"]

log = logging.getLogger(__name__)

MAX_BACKOFF = 64
"""The longest wait between two attempts, in multiples of ``retry_s``."""
LISTED = 10
"""A pickup reads up to this many times ``queue_size`` stored checks, earliest first."""
BACKLOG = LISTED
"""How many times ``queue_size`` checks may wait in the store only (a pickup sees them)."""


@dataclass(eq=False)
class Entry:
    """A check this instance runs: the record, its revision in the store (None: not
    stored), and whether it was taken over from the store."""

    check: PendingCheck
    revision: int | None
    recovered: bool = False


class CheckQueue:
    """The durable, bounded queue of checks; see the module."""

    def __init__(
        self, *, store: Store, holder: str, settings: JudgeSettings,
        counts: Counter[tuple[str, str, str]], run: Callable[[Entry], Awaitable[bool]],
        sweep_s: float = 30.0, clock: Callable[[], float] = time.time,
    ) -> None:  # fmt: skip
        self.store = store
        self.holder = holder
        self.settings = settings
        self.counts = counts
        self.run = run
        self.sweep_s = sweep_s
        self.clock = clock
        self.outstanding: dict[str, Entry] = {}
        self.backlogged = 0
        """Checks this instance wrote to the store only, not yet taken by a pickup."""
        self.promised = 0
        """Streams' checks promised and not added yet (each holds a place)."""
        self._queue: asyncio.Queue[Entry] = asyncio.Queue()
        self._workers: list[asyncio.Task[None]] = []
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._sweeper: asyncio.Task[None] | None = None

    def _count(self, check: PendingCheck, outcome: str) -> None:
        self.counts[check.agent_id, check.task_type, outcome] += 1

    def _start_workers(self) -> None:
        if not self._workers:
            self._workers = [
                asyncio.ensure_future(self._work()) for _ in range(self.settings.workers)
            ]

    def start(self) -> None:
        """Run the workers, and ``pickup`` now and every ``sweep_s``."""
        self._start_workers()

        async def sweep() -> None:
            passes = QuietPasses("taking over the gateway's stored checks", (StoreUnavailable,))
            while True:
                await passes.run(self.pickup)
                await asyncio.sleep(self.sweep_s)

        if self._sweeper is None:
            self._sweeper = asyncio.ensure_future(sweep())

    def room(self) -> bool:
        """Whether one more check can be kept (queued here, or backlogged in the store)."""
        held = len(self.outstanding) + self.backlogged + self.promised
        return held < self.settings.queue_size * (1 + BACKLOG)

    def promise(self) -> bool:
        """Hold a place for a check that will be added later (a stream's, at its end);
        False when there is none (the check is not promised)."""
        if not self.room():
            return False
        self.promised += 1
        return True

    async def add(self, check: PendingCheck, promised: bool = False) -> bool:
        """Store ``check`` and queue it, or backlog it in the store when ``queue_size``
        checks are outstanding here; False (nothing stored) when it cannot be kept. A
        ``promised`` check (``promise``) is kept whatever the bounds."""
        if promised:
            self.promised = max(0, self.promised - 1)
        elif not self.room():
            return False
        if len(self.outstanding) >= self.settings.queue_size:
            if await asyncio.shield(self._backlog(check)):
                return True
            if not promised:
                return False
        entry = Entry(check, None)
        self.outstanding[check.contract_id] = entry  # its place taken before the write
        # stored and queued whole, also when the request is cancelled meanwhile (its
        # caller went away after the answer): else it would hold its place for ever
        await asyncio.shield(self._store_and_queue(entry))
        return True

    async def _backlog(self, check: PendingCheck) -> bool:
        """Write ``check`` to the store only, for a pickup; False when the write failed."""
        try:
            await self.store.put_check(check, 0)
        except Exception as error:  # the request is never the check's to fail
            log.warning("gateway check %s not backlogged: %s", check.contract_id, error)
            return False
        self.backlogged += 1
        self._count(check, "backlogged")
        return True

    async def _store_and_queue(self, entry: Entry) -> None:
        try:
            entry.revision = await self.store.put_check(entry.check, 0)
        except Exception as error:  # the request is never the check's to fail
            log.warning(
                "gateway check %s not stored (kept in memory only: a crash loses it): %s",
                entry.check.contract_id, error,
            )  # fmt: skip
        self._start_workers()
        self._queue.put_nowait(entry)

    async def _work(self) -> None:
        while True:
            entry = await self._queue.get()
            try:
                if not entry.recovered and entry.check.attempts == 0:
                    self._count(entry.check, "started")
                try:
                    passed = await self.run(entry)
                except asyncio.CancelledError:
                    raise
                except Exception as error:  # retried, or given up: the worker goes on
                    await self._failed(entry, error)
                else:
                    await self._done(entry, "passed" if passed else "failed")
                if self.backlogged and self._queue.empty():  # room now: take the backlog
                    with contextlib.suppress(Exception):
                        await self.pickup()
            finally:
                self._queue.task_done()

    async def _forget(self, entry: Entry) -> None:
        """Deleted from the store, then not outstanding here any more (in that order: a
        pickup meanwhile must not take it over). A failed delete is logged: the next
        pickup finds its verdict stored and deletes it then."""
        try:
            if entry.revision is not None:
                await self.store.delete_check(entry.check.contract_id)
        except Exception as error:
            log.warning("gateway check %s done, not deleted yet: %s", entry.check.contract_id,
                        error)  # fmt: skip
        finally:
            self.outstanding.pop(entry.check.contract_id, None)

    async def _done(self, entry: Entry, outcome: str) -> None:
        await self._forget(entry)
        self._count(entry.check, outcome)

    def backoff_s(self, attempts: int) -> float:
        """The wait after the ``attempts``-th failed attempt."""
        return float(self.settings.retry_s * min(2 ** (attempts - 1), MAX_BACKOFF))

    async def _failed(self, entry: Entry, error: Exception) -> None:
        check = entry.check
        attempts = check.attempts + 1
        now = self.clock()
        wait = self.backoff_s(attempts)
        if isinstance(error, ProviderError) and error.retry_after_s:  # the judge said when
            wait = max(wait, error.retry_after_s)
        why = scrub(f"{type(error).__name__}: {error}")[:1000]  # stored: no secret
        if attempts >= self.settings.attempts or now + wait > check.at + self.settings.retention_s:
            log.warning(
                "gateway check %s of %s given up after %d attempt(s): %s",
                check.contract_id, check.agent_id, attempts, why,
            )  # fmt: skip
            await self._done(entry, "error")
            return
        log.warning("gateway check %s of %s: attempt %d failed, again in %.1f s: %s",
                 check.contract_id, check.agent_id, attempts, wait, why)  # fmt: skip
        self._count(check, "retried")
        entry.check = check.model_copy(update={"attempts": attempts, "due": now + wait,
                                               "error": why})  # fmt: skip
        if entry.revision is not None:
            try:
                entry.revision = await self.store.put_check(entry.check, entry.revision)
            except RevisionConflict:  # another instance took it over: it runs it
                self.outstanding.pop(check.contract_id, None)
                return
            except Exception as store_error:  # retried from memory; the store's copy is older
                log.warning("gateway check %s: its retry not stored: %s", check.contract_id,
                            store_error)  # fmt: skip
        self._later(entry, wait)

    def _later(self, entry: Entry, wait: float) -> None:
        contract = entry.check.contract_id

        def due() -> None:
            self._timers.pop(contract, None)
            self._queue.put_nowait(entry)

        self._timers[contract] = asyncio.get_running_loop().call_later(max(0.0, wait), due)

    async def pickup(self) -> int:
        """Take over the stored checks no live instance runs (the module says how); how
        many were taken."""
        room = self.settings.queue_size - len(self.outstanding)
        if room <= 0:
            return 0
        # the earliest stored, this instance's and live instances' included (skipped):
        # up to ten queues' worth, so a dead instance's checks behind them are seen
        listed = await self.store.list_checks(LISTED * self.settings.queue_size)
        now = self.clock()
        live = await self.store.live_leases(now) if listed else frozenset()
        taken = 0
        for found in listed:
            check = found.value
            if check.contract_id in self.outstanding:
                continue
            if check.owner != self.holder and check.owner in live:
                continue
            if taken >= room:
                break
            if now > check.at + self.settings.retention_s:
                log.warning("gateway check %s of %s given up: kept past gateway.judge"
                            ".retention_s", check.contract_id, check.agent_id)  # fmt: skip
                await self.store.delete_check(check.contract_id)
                self._count(check, "error")
                continue
            mine = check.model_copy(update={"owner": self.holder})
            try:
                revision = await self.store.put_check(mine, found.revision)
            except RevisionConflict:  # another instance took it first
                continue
            entry = Entry(mine, revision, recovered=True)
            if check.owner == self.holder and self.backlogged > 0:
                self.backlogged -= 1  # one of its own backlog, most likely
            self.outstanding[check.contract_id] = entry
            self._count(check, "recovered")
            taken += 1
            self._start_workers()
            self._later(entry, check.due - now)
        if taken:
            log.warning("took over %d gateway check(s) stored and not finished", taken)
        return taken

    async def close(self, grace_s: float) -> int:
        """Let the queued checks finish within ``grace_s`` seconds; the others stay stored
        (``deferred``; ``dropped`` when never stored). How many did not finish."""
        if self._sweeper is not None:
            await cancelled([self._sweeper])
            self._sweeper = None
        if self._workers:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(grace_s):
                    await self._queue.join()
        for timer in self._timers.values():
            timer.cancel()
        await cancelled(self._workers)
        left = list(self.outstanding.values())
        for entry in left:
            self._count(entry.check, "dropped" if entry.revision is None else "deferred")
        if left:
            log.warning("stopping: %d gateway check(s) not finished, kept for the next start",
                        len(left))  # fmt: skip
        self._workers, self._timers, self.outstanding = [], {}, {}
        self._queue = asyncio.Queue()
        return len(left)
