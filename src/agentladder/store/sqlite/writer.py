"""The SQLite store's single writer: one thread, one connection, group commit.

Writes are jobs (functions of the connection) queued to one thread. The thread takes
every job waiting, up to ``max_batch``, and runs them in ONE transaction opened with
``BEGIN IMMEDIATE``, each inside its own savepoint: a job that raises is rolled back
alone and its caller gets the exception; the others commit together. Callers learn the
outcome only after ``COMMIT`` returned, so nothing is acknowledged before it is durable.
Under load one commit (and, with ``synchronous=full``, one fsync) serves many writes;
a lone write still commits at once.

A job whose caller gave up (its future cancelled, e.g. the awaiting task was cancelled)
before the thread took it is skipped: the caller was told it did not happen, so it must
not. Once taken, a job's future can no longer be cancelled; its outcome is delivered.

``check`` (the file's identity and write permission, ``identity.FileWatch``) runs before
each transaction, whose jobs all fail with its error instead, and after each commit
(identity only): a commit into a file that was deleted or replaced meanwhile went where
nobody will read it, so its callers are told it failed, never that it was stored.
"""

from __future__ import annotations

import logging
import queue
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

__all__ = ["GroupWriter"]

log = logging.getLogger(__name__)

T = TypeVar("T")
_Job = tuple[Callable[[sqlite3.Connection], Any], "Future[Any]"]
_STOP = None


class GroupWriter:
    """Runs write jobs on one connection in batched transactions."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        max_batch: int = 128,
        check: Callable[[bool], None] | None = None,
    ) -> None:
        self._conn = conn
        self._max_batch = max_batch
        self._check = check
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._after_commit: list[Callable[[], None]] = []
        self._thread = threading.Thread(
            target=self._run, name="agentladder-sqlite-writer", daemon=True
        )
        self._thread.start()

    def submit(self, job: Callable[[sqlite3.Connection], T]) -> Future[T]:
        """Queue ``job``; its future completes after the transaction holding it committed."""
        future: Future[T] = Future()
        self._queue.put((job, future))
        return future

    def after_commit(self, action: Callable[[], None]) -> None:
        """From inside a job: run ``action`` once the current transaction has committed."""
        self._after_commit.append(action)

    def close(self, last: Callable[[sqlite3.Connection], None] | None = None) -> None:
        """Finish queued jobs, stop the thread, run ``last`` on the connection (outside
        any transaction) and close it."""
        self._queue.put(_STOP)
        self._thread.join()
        try:
            if last is not None:
                last(self._conn)
        finally:
            self._conn.close()

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is _STOP:
                return
            batch = [first]
            stop = False
            while len(batch) < self._max_batch:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is _STOP:
                    stop = True
                    break
                batch.append(item)
            self._run_batch(batch)
            if stop:
                return

    def _run_batch(self, queued: list[_Job]) -> None:
        # claim each future: a cancelled one is dropped, a claimed one cannot be cancelled
        batch = [(job, future) for job, future in queued if future.set_running_or_notify_cancel()]
        if not batch:
            return
        conn = self._conn
        outcomes: list[tuple[bool, Any]] = []
        self._after_commit = []
        try:
            if self._check is not None:
                self._check(True)
            conn.execute("BEGIN IMMEDIATE")
            for job, _ in batch:
                marks = len(self._after_commit)
                conn.execute("SAVEPOINT job")
                try:
                    outcomes.append((True, job(conn)))
                    conn.execute("RELEASE job")
                except Exception as error:  # handed to the caller
                    conn.execute("ROLLBACK TO job")
                    conn.execute("RELEASE job")
                    del self._after_commit[marks:]
                    outcomes.append((False, error))
            conn.execute("COMMIT")
            if self._check is not None:
                self._check(False)
        except Exception as error:  # the whole batch failed
            if conn.in_transaction:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:  # a damaged file may refuse it too: the thread goes on
                    log.exception("the SQLite writer could not roll back")
            for _, future in batch:
                future.set_exception(error)
            return
        for action in self._after_commit:
            try:
                action()
            except Exception:  # committed already: the writer thread must go on
                log.exception("an after-commit action of the SQLite writer failed")
        for (_, future), (ok, value) in zip(batch, outcomes, strict=True):
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)
