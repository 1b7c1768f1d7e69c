"""The SQLite store's file: its connections, its writer thread and its reader threads.

Writes go through one connection on one thread (``writer.GroupWriter``). Short, bounded
reads run on the calling event loop's thread on a connection of its own; everything else
runs on ``READERS`` threads, each with its own connection (see ``store.py``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from agentladder.errors import StoreUnavailable
from agentladder.store.sqlite import ops
from agentladder.store.sqlite.health import damage, is_damage, unavailable
from agentladder.store.sqlite.identity import FileWatch, mark, vanished
from agentladder.store.sqlite.schema import migrate
from agentladder.store.sqlite.writer import GroupWriter

__all__ = ["CHECKPOINT_PAGES", "CHECKPOINT_PAGES_LARGE", "INLINE_MANY", "SqliteFile"]

log = logging.getLogger(__name__)

T = TypeVar("T")
_SYNC_MODES = ("full", "normal", "extra", "off")
READERS = 4
"""Reader threads, each with its own connection: WAL lets them read while one writes."""
CHECKPOINT_PAGES = 1000
"""WAL pages after which the writer's commit checkpoints, for a file under
``LARGE_FILE_BYTES`` when opened: SQLite's default. The checkpoint runs inside that commit
and writes the WAL's pages back into the file. In a small file they are the same few hot
pages, so the checkpoint is short whatever the threshold, and a lower one only syncs the
file more often."""
CHECKPOINT_PAGES_LARGE = 100
"""The same for a file of ``LARGE_FILE_BYTES`` or more when opened. There each changed row
is a page of its own somewhere in the file, so a checkpoint's time grows with the pages it
writes back (about 14 per judgment on the 100,000-agent file, 10 to 35 µs each plus the
sync, by the moment). On that file, 4 alternating runs each (``bench_checkpoint``,
docs/benchmarks.md): judgment p99 20.2 ms at 1,000 pages, 10.8 at 250, 5.8 at 100, at
863, 603 and 702 judgments/s; on a small file 100 pages cost what 250 do (0.92 of the
one-submitter rate at 1,000)."""
LARGE_FILE_BYTES = 1 << 30
"""From this size (1 GiB) a file gets ``CHECKPOINT_PAGES_LARGE``. Measured at a few MB and
at 4.9 GB; where between them the smaller threshold starts to pay is a judgment call.
``?checkpoint_pages=`` in the URL overrides both."""
INLINE_BUSY_MS = 50
"""How long a read on the event loop's thread waits for a lock before a reader thread
takes it over (in WAL a reader waits only in rare cases, e.g. while the WAL is recovered)."""
INLINE_MANY = 100
"""The most agents a ``get_many_*`` read serves on the event loop's thread; more go to a
reader thread. A deliberation reads a few agents; the directory may read tens of
thousands, which inline held the loop (and every other request) for half a second at
100,000 agents."""


def _connect(path: str, synchronous: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=60.0, isolation_level=None, check_same_thread=False)
    _enable_wal(conn)
    conn.execute(f"PRAGMA synchronous = {synchronous.upper()}")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA busy_timeout = 60000")
    return conn


def _enable_wal(conn: sqlite3.Connection, timeout: float = 60.0) -> None:
    """Switch to WAL. The switch needs the file alone for a moment and SQLite does not
    wait for it (no busy handler), so when another process holds it, retry briefly."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def default_checkpoint_pages(path: str) -> int:
    """``CHECKPOINT_PAGES``, or ``CHECKPOINT_PAGES_LARGE`` for a file that is large now."""
    try:
        size = os.path.getsize(path)
    except OSError:  # not created yet
        return CHECKPOINT_PAGES
    return CHECKPOINT_PAGES_LARGE if size >= LARGE_FILE_BYTES else CHECKPOINT_PAGES


class SqliteFile:
    """One SQLite file opened for the store: a writer thread, reader threads, and a
    connection for short reads on the event loop's thread."""

    def __init__(
        self,
        path: str | Path,
        *,
        synchronous: str = "full",
        checkpoint_pages: int | None = None,
        inline_reads: bool = True,
    ) -> None:
        if synchronous not in _SYNC_MODES:
            raise ValueError(f"synchronous must be one of {_SYNC_MODES}, not {synchronous!r}")
        self.path = str(path)
        gone = vanished(self.path)
        if gone is not None:  # an empty file must not take the place of a vanished store
            raise gone
        self._reader = ThreadPoolExecutor(READERS, thread_name_prefix="agentladder-sqlite-r")
        self._synchronous = synchronous
        self._local = threading.local()  # one read connection per reader thread
        self._read_conns: list[sqlite3.Connection] = []
        self._conns_lock = threading.Lock()
        self._write_conn = _connect(self.path, synchronous)
        migrate(self._write_conn)
        self.watch = FileWatch(self.path)
        mark(self.path)
        pages = checkpoint_pages
        if pages is None:
            pages = default_checkpoint_pages(self.path)
        self._write_conn.execute(f"PRAGMA wal_autocheckpoint = {int(pages)}")
        # as SQLite holds it for the writer's connection
        self.checkpoint_pages: int = self._write_conn.execute(
            "PRAGMA wal_autocheckpoint"
        ).fetchone()[0]
        self._writer = GroupWriter(self._write_conn, check=self._check_file)
        self.inline_reads = inline_reads
        self._inline: sqlite3.Connection | None = None  # for _read_short, loop thread only
        self._closed = False
        self._damage: StoreUnavailable | None = None  # set once the file is found damaged

    def _check_file(self, writable: bool) -> None:
        """The writer's check of the file (on its thread): once the file is found gone,
        what the writer's connection still reads of it is saved (``FileWatch.rescue``)."""
        try:
            self.watch.check(writable)
        except StoreUnavailable:
            if self.watch.gone is not None:
                self.watch.rescue(self._write_conn)
                raise self.watch.gone from None
            raise

    def _last(self, conn: sqlite3.Connection) -> None:
        """Before the writer's connection closes: a file gone meanwhile (found now, or by
        ``ping`` alone) is saved while that connection still reads it."""
        try:
            self.watch.check(writable=False)
        except StoreUnavailable:
            self.watch.rescue(conn)

    @property
    def url(self) -> str:
        """``sqlite:///`` and the file's path."""
        return f"sqlite:///{self.path}"

    def _failure(self, error: sqlite3.DatabaseError) -> StoreUnavailable | None:
        """What a failed read or write raises instead of ``error``: ``StoreUnavailable``
        for a damaged file (and the store says so from now on: ``ping``) or one that
        cannot be used now; None: ``error`` itself."""
        if is_damage(error):
            self._damage = damage(self.path, str(error))
            log.error("%s", self._damage)
            return self._damage
        return unavailable(self.path, error)

    async def _write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        if self._closed:
            raise StoreUnavailable("the store is closed")
        try:
            return await asyncio.wrap_future(self._writer.submit(fn))
        except sqlite3.DatabaseError as error:
            failure = self._failure(error)
            if failure is None:
                raise
            raise failure from error

    async def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        if self._closed:
            raise StoreUnavailable("the store is closed")
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._reader, self._run_read, fn)
        except sqlite3.DatabaseError as error:
            failure = self._failure(error)
            if failure is None:
                raise
            raise failure from error

    async def _read_short(
        self, fn: Callable[[sqlite3.Connection], T], *, one_statement: bool = False
    ) -> T:
        """A short, bounded read run on the calling (event loop) thread: no hop to a
        reader thread. A lock held elsewhere (rare in WAL) sends it to a reader thread.
        ``one_statement``: ``fn`` runs a single SELECT, which sees one snapshot by itself
        (no ``BEGIN`` and ``COMMIT`` around it)."""
        if self._closed:
            raise StoreUnavailable("the store is closed")
        if not self.inline_reads:
            return await self._read(fn)
        conn = self._inline
        if conn is None:
            conn = self._inline = _connect(self.path, self._synchronous)
            conn.execute(f"PRAGMA busy_timeout = {INLINE_BUSY_MS}")
            with self._conns_lock:
                self._read_conns.append(conn)
        try:
            return fn(conn) if one_statement else ops.run_read(conn, fn)
        except sqlite3.DatabaseError as error:
            locked = "locked" in str(error) or "busy" in str(error)
            if isinstance(error, sqlite3.OperationalError) and locked:
                return await self._read(fn)
            failure = self._failure(error)
            if failure is None:
                raise
            raise failure from error

    async def _read_many(self, fn: Callable[[sqlite3.Connection], T], agents: int) -> T:
        """A read of ``agents`` agents: on the loop's thread up to ``INLINE_MANY``, else on
        a reader thread."""
        if agents <= INLINE_MANY:
            return await self._read_short(fn)
        return await self._read(fn)

    def _run_read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = _connect(self.path, self._synchronous)
            self._local.conn = conn
            with self._conns_lock:
                self._read_conns.append(conn)
        return ops.run_read(conn, fn)

    async def close(self) -> None:
        """Finish pending work and close both connections."""
        if self._closed:
            return
        self._closed = True
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self._writer.close, self._last)
        self._reader.shutdown(wait=True)
        with self._conns_lock:
            for conn in self._read_conns:
                conn.close()
            self._read_conns.clear()

    async def ping(self) -> None:
        """Run a trivial query; ``StoreUnavailable`` once the file was found damaged, or
        when it is no longer the file opened or cannot be written (``FileWatch``)."""
        if self._damage is not None:
            raise self._damage
        self.watch.check(writable=False)
        self.watch.check(writable=True)
        try:
            await self._read(lambda c: c.execute("SELECT 1").fetchone())
        except sqlite3.Error as error:
            raise StoreUnavailable(f"sqlite {self.path}: {error}") from error
