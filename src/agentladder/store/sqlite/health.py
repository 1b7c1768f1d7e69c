"""A damaged SQLite file: how it is recognised, at start (a bounded ``quick_check``) and at
run time (an error SQLite reports as ``SQLITE_CORRUPT`` or ``SQLITE_NOTADB``), and the one
line that tells the operator how to check and restore it."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from agentladder.errors import StoreUnavailable

__all__ = ["damage", "is_damage", "quick_check", "unavailable"]

_DAMAGE_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
_UNAVAILABLE_CODES = frozenset(
    {sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN}
)


def _code(error: BaseException) -> int | None:
    code = getattr(error, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(error, sqlite3.Error) and isinstance(code, int) else None


def unavailable(path: str, error: BaseException) -> StoreUnavailable | None:
    """The store error for a file that cannot be read or written now (an I/O error, a full
    disk, a read-only file), or None for any other error."""
    if _code(error) not in _UNAVAILABLE_CODES:
        return None
    return StoreUnavailable(f"the SQLite file {path} cannot be used now: {error}")


def is_damage(error: BaseException) -> bool:
    """Whether ``error`` says the file is damaged (malformed, not a database, or holding
    text that is not UTF-8 where the schema stores text)."""
    if isinstance(error, sqlite3.OperationalError) and str(error).startswith("Could not decode"):
        return True
    return _code(error) in _DAMAGE_CODES


def damage(path: str, problem: str) -> StoreUnavailable:
    """The store error naming the damaged file, the problem and what to do (one line)."""
    problem = " ".join(problem.replace("*", "").split())
    return StoreUnavailable(
        f"the SQLite file {path} is damaged ({problem}): check it with"
        f" `sqlite3 {path} 'PRAGMA integrity_check'`, then restore it from a backup"
        f" (or save what is readable with `sqlite3 {path} .recover`)"
    )


def quick_check(path: str | Path, budget_s: float) -> tuple[str | None, bool]:
    """``PRAGMA quick_check`` of the file at ``path``, read only, for at most ``budget_s``
    seconds: (the first problem found or None, whether the check finished)."""
    deadline = time.monotonic() + budget_s
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5.0)
    try:
        conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
        try:
            rows = conn.execute("PRAGMA quick_check(1)").fetchall()
        except sqlite3.OperationalError as error:
            if "interrupted" in str(error):
                return None, False
            raise
        except sqlite3.DatabaseError as error:
            if is_damage(error):
                return str(error), True
            raise
    finally:
        conn.close()
    first = str(rows[0][0]) if rows else "no answer"
    return (None if first == "ok" else first), True
