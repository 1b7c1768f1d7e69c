"""The SQLite group writer: a failing write is rolled back alone; others commit together."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from agentladder.errors import StoreUnavailable
from agentladder.store.sqlite.identity import FileWatch
from agentladder.store.sqlite.writer import GroupWriter


def _writer(path: Path) -> GroupWriter:
    """A writer on a new file with one table ``t (v INTEGER)``."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("CREATE TABLE t (v INTEGER)")
    return GroupWriter(conn)


def _values(path: Path) -> list[int]:
    """What ``t`` holds in the file, read on a connection of its own, sorted."""
    check = sqlite3.connect(path)
    try:
        return sorted(v for (v,) in check.execute("SELECT v FROM t"))
    finally:
        check.close()


def test_failed_job_rolls_back_alone_and_others_commit(tmp_path: Path) -> None:
    """Queued jobs share one transaction; the one that raises leaves no trace."""
    writer = _writer(tmp_path / "w.db")

    def good(value: int) -> Callable[[sqlite3.Connection], int]:
        return lambda c: c.execute("INSERT INTO t VALUES (?)", (value,)).rowcount

    def bad(c: sqlite3.Connection) -> None:
        c.execute("INSERT INTO t VALUES (99)")
        raise ValueError("refused")

    first, refused, second = writer.submit(good(1)), writer.submit(bad), writer.submit(good(2))
    assert first.result(timeout=10) == 1
    with pytest.raises(ValueError, match="refused"):
        refused.result(timeout=10)
    assert second.result(timeout=10) == 1
    writer.close()
    assert _values(tmp_path / "w.db") == [1, 2]


def test_after_commit_actions_run_only_for_committed_jobs(tmp_path: Path) -> None:
    """An action registered by a job that then fails is dropped with its savepoint."""
    conn = sqlite3.connect(tmp_path / "a.db", isolation_level=None, check_same_thread=False)
    writer = GroupWriter(conn)
    seen: list[str] = []

    def registers(name: str, fail: bool) -> Callable[[sqlite3.Connection], None]:
        def job(c: sqlite3.Connection) -> None:
            writer.after_commit(lambda: seen.append(name))
            if fail:
                raise RuntimeError(name)

        return job

    ok = writer.submit(registers("kept", fail=False))
    failed = writer.submit(registers("dropped", fail=True))
    ok.result(timeout=10)
    with pytest.raises(RuntimeError):
        failed.result(timeout=10)
    writer.close()
    assert seen == ["kept"]


def test_a_cancelled_job_is_skipped_and_the_writer_goes_on(tmp_path: Path) -> None:
    """A caller that gave up before its job ran: the job never runs, the thread survives,
    and later writes commit (a cancelled future once killed the writer thread)."""
    writer = _writer(tmp_path / "c.db")
    started, release = threading.Event(), threading.Event()

    def blocking(c: sqlite3.Connection) -> None:
        started.set()
        assert release.wait(timeout=10)
        c.execute("INSERT INTO t VALUES (1)")

    first = writer.submit(blocking)
    assert started.wait(timeout=10)
    assert not first.cancel()  # taken by the thread: its outcome will be delivered
    gave_up = writer.submit(lambda c: c.execute("INSERT INTO t VALUES (2)"))
    assert gave_up.cancel()
    release.set()
    first.result(timeout=10)
    later = writer.submit(lambda c: c.execute("INSERT INTO t VALUES (3)").rowcount)
    assert later.result(timeout=10) == 1
    writer.close()
    assert _values(tmp_path / "c.db") == [1, 3]


def test_a_failing_after_commit_action_does_not_stop_the_writer(tmp_path: Path) -> None:
    """The commit stands, the caller gets its result, and the next write still commits."""
    writer = _writer(tmp_path / "f.db")

    def fails() -> None:
        raise ZeroDivisionError("division by zero")

    def job(c: sqlite3.Connection) -> int:
        writer.after_commit(fails)
        return c.execute("INSERT INTO t VALUES (1)").rowcount

    assert writer.submit(job).result(timeout=10) == 1
    assert (
        writer.submit(lambda c: c.execute("INSERT INTO t VALUES (2)").rowcount).result(timeout=10)
        == 1
    )
    writer.close()
    assert _values(tmp_path / "f.db") == [1, 2]


def test_a_commit_into_a_file_deleted_meanwhile_is_not_acknowledged(tmp_path: Path) -> None:
    """A job that deletes the file (as an operator could, mid-transaction) commits into a
    file nobody can open again: its caller gets StoreUnavailable, not the result, and so
    do later writes; a job refused before its transaction starts leaves nothing behind."""
    path = tmp_path / "w.db"
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("CREATE TABLE t (v INTEGER)")
    watch = FileWatch(str(path))
    writer = GroupWriter(conn, check=watch.check)
    assert writer.submit(lambda c: c.execute("INSERT INTO t VALUES (1)").rowcount).result(10) == 1

    def deletes(c: sqlite3.Connection) -> int:
        c.execute("INSERT INTO t VALUES (2)")
        path.unlink()
        return 2

    with pytest.raises(StoreUnavailable, match="deleted or moved"):
        writer.submit(deletes).result(timeout=10)
    ran: list[int] = []
    later = writer.submit(lambda c: ran.append(3))
    with pytest.raises(StoreUnavailable, match="deleted or moved"):
        later.result(timeout=10)
    writer.close()
    assert ran == []
