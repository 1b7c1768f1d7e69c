"""The SQLite file a store serves must stay the file it opened, and stay writable; and a
store that vanished must not come back empty.

- ``FileWatch`` remembers the file's identity (device and inode) when the store opens it.
  The writer checks it before each write transaction (one ``access`` call) and after
  each commit (one ``stat``), a few microseconds each. A file deleted, moved or replaced
  while served makes every later write ``StoreUnavailable`` (503), for good, since this process
  can no longer write where a restart would read; a file made read-only (write permission
  taken away, or ``chattr +i``, which stops root too) refuses writes until it is writable
  again. ``ping`` checks the same, so ``/readyz`` says not ready.
- The marker ``FILE-created``, beside the file, says that a store lived there. It is
  written when the store creates the file (or first opens one that has none). A file
  that is missing while its marker is there was deleted or moved: the store refuses to
  create an empty one in its place (``vanished``) unless asked to (``forget_vanished``,
  which ``--create`` runs), so a restart never silently serves an empty store where one
  held data.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from agentladder.errors import StoreUnavailable

__all__ = [
    "FILE_SUFFIXES",
    "MARKER_SUFFIX",
    "FileWatch",
    "forget_vanished",
    "mark",
    "marker_path",
    "vanished",
]

log = logging.getLogger(__name__)

MARKER_SUFFIX = "-created"
_COMPANIONS = ("-wal", "-shm", "-journal")
FILE_SUFFIXES = ("", *_COMPANIONS, MARKER_SUFFIX)
"""Every file a SQLite store at ``FILE`` may keep: ``FILE`` and SQLite's companions beside
it, and the marker. The repository's .gitignore covers each of them for any ``*.db``
(tests/cli/test_demo_files_ignored.py), so ``make demo`` leaves the work tree clean."""


def marker_path(path: str | Path) -> Path:
    """The marker of the SQLite file at ``path``: ``FILE-created`` beside it."""
    return Path(f"{path}{MARKER_SUFFIX}")


def vanished(path: str | Path) -> StoreUnavailable | None:
    """The error for a missing file whose marker says a store lived there; None when the
    file exists or no store was ever marked there (a first start)."""
    marker = marker_path(path)
    if Path(path).exists() or not marker.exists():
        return None
    try:
        since = json.loads(marker.read_text(encoding="utf-8")).get("marked_at", "?")
    except (OSError, ValueError, AttributeError):
        since = "?"
    return StoreUnavailable(
        f"the SQLite file {path} is missing, but {marker} says a store was there (since"
        f" {since}): it was deleted or moved. Put it back (restore it from a backup), or,"
        " to start an empty store in its place, run the command again with --create"
    )


def mark(path: str | Path) -> None:
    """Write the marker of the file at ``path`` if it has none (never replaced: several
    processes may open the file at once); a marker that cannot be written is logged."""
    marker = marker_path(path)
    if marker.exists():
        return
    text = json.dumps(
        {
            "file": str(Path(path).resolve()),
            "marked_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "note": "agentladder's SQLite store lives in the file named here; while this"
            " marker exists, a missing file is refused instead of replaced by an empty one"
            " (--create starts an empty one)",
        }
    )
    try:
        with marker.open("x", encoding="utf-8") as out:
            out.write(text + "\n")
    except FileExistsError:
        return
    except OSError as error:
        log.warning("cannot write the marker %s (%s): a deleted %s would not be told from"
                    " a first start", marker, error.strerror, path)  # fmt: skip


def forget_vanished(path: str | Path) -> bool:
    """For ``--create``: when the file at ``path`` is missing, remove its marker and the
    companions SQLite left beside it (a ``-wal`` of the vanished file must not be replayed
    into the new one); whether there was a marker."""
    if Path(path).exists():
        return False
    marker = marker_path(path)
    had = marker.exists()
    for end in _COMPANIONS:
        Path(f"{path}{end}").unlink(missing_ok=True)
    marker.unlink(missing_ok=True)
    if had:
        log.warning("%s was missing: starting an empty store in its place (--create)", path)
    return had


class FileWatch:
    """The identity of the file a store opened, checked before and after writes."""

    def __init__(self, path: str) -> None:
        self.path = path
        found = os.stat(path)
        self.identity = (found.st_dev, found.st_ino)
        # the -wal and -shm this store uses: they must not be replayed into another file
        self.companions = {end: _identity(Path(f"{path}{end}")) for end in _COMPANIONS[:2]}
        self.gone: StoreUnavailable | None = None  # set for good once it vanished
        self.rescued: Path | None = None  # where ``rescue`` saved it
        self._rescue_tried = False

    def check(self, writable: bool = True) -> None:
        """``StoreUnavailable`` when the file at the path is not the one opened (deleted,
        moved or replaced: from then on), or, with ``writable``, cannot be written now
        (read-only). ``writable`` is the check before a write transaction: one ``access``
        call, the identity looked at only when it fails (a commit into a file replaced by
        a writable one is caught by the check after it, ``writable=False``: one ``stat``)."""
        if self.gone is not None:
            raise self.gone
        if not writable:
            self._same()
        elif not os.access(self.path, os.W_OK):
            self._same()
            raise StoreUnavailable(
                f"the SQLite file {self.path} is read-only now: writes are refused until it"
                f" is writable again (chmod u+w {self.path}, or chattr -i {self.path})"
            )

    def _same(self) -> None:
        try:
            found = os.stat(self.path)
        except FileNotFoundError:
            pass
        except OSError as error:
            raise StoreUnavailable(
                f"the SQLite file {self.path} cannot be checked now: {error.strerror}"
            ) from error
        else:
            if found.st_ino == self.identity[1] and found.st_dev == self.identity[0]:
                return
        self.gone = StoreUnavailable(self._gone_message())
        log.error("%s", self.gone)
        raise self.gone

    def _gone_message(self) -> str:
        replaced = _identity(Path(self.path)) is not None
        what = "replaced by another file" if replaced else "deleted or moved"
        line = f"the SQLite file {self.path} was {what} while served: writes are refused"
        if self.rescued is not None:
            kept = "the old file's content" if replaced else "everything it held"
            line += f"; {kept}, as this process last read it, is saved in {self.rescued}"
        if replaced:
            return line + "; restart serve to serve the file now at that path"
        if self.rescued is not None:
            return line + f": put that file back as {self.path} and restart serve"
        return line + "; put it back (from a backup) and restart serve"

    def rescue(self, conn: sqlite3.Connection) -> None:
        """Once the file is gone: copy what ``conn`` (opened on it before it went) still
        reads into ``FILE.rescued-TIME`` beside it, with SQLite's backup (consistent, WAL
        included), then remove the ``-wal`` and ``-shm`` of the old file from the path, so
        that no later open replays them into another file there. Once; never raises."""
        if self.gone is None or self._rescue_tried:
            return
        self._rescue_tried = True
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        target = Path(f"{self.path}.rescued-{stamp}")
        try:
            copy = sqlite3.connect(target)
            try:
                conn.backup(copy)
            finally:
                copy.close()
        except (sqlite3.Error, OSError) as error:
            log.error("could not save the vanished SQLite file %s into %s: %s (its -wal and"
                      " -shm are left at the path: move them away before serving another"
                      " file there)", self.path, target, error)  # fmt: skip
            return
        self.rescued = target
        for end, identity in self.companions.items():
            companion = Path(f"{self.path}{end}")
            if identity is not None and _identity(companion) == identity:
                companion.unlink(missing_ok=True)
        self.gone = StoreUnavailable(self._gone_message())
        log.error("%s", self.gone)


def _identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the file at ``path``; None when there is none."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None
    return found.st_dev, found.st_ino
