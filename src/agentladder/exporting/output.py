"""Writing an export: JSONL or CSV, to stdout or atomically to a file.

JSONL: one item's JSON per line, as the API encodes it. CSV: a header row of the kind's
field names (``items.COLUMNS``), then one row per item: a string as it is, a number as
JSON writes it, ``true``/``false``, an empty cell for null or an absent field, and a
nested value (a list or an object) as its JSON text in the cell.

Rows end in CRLF (RFC 4180).

``--out FILE`` writes a temporary file beside FILE and renames it over FILE once every
item is written and synced, so a failed or interrupted export leaves no partial file (and
an older FILE as it was). The file gets an older FILE's mode, else the umask's.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any, TextIO

from agentladder.errors import InvalidInput

__all__ = ["Format", "cell", "check_out", "write_export"]


class Format(StrEnum):
    """How an export is written."""

    JSONL = "jsonl"
    CSV = "csv"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def cell(value: Any) -> str:
    """A CSV cell: strings as they are, null empty, anything else as its JSON text."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return _json(value)


def check_out(out: Path) -> None:
    """``InvalidInput("--out")`` for a path an export cannot be written to (before any
    store is read)."""
    if out.is_dir():
        raise InvalidInput("--out", str(out), "is a directory: name a file")
    if not out.parent.is_dir():
        raise InvalidInput("--out", str(out), f"its directory {out.parent} does not exist")


def _mode(out: Path) -> int:
    """An older ``out``'s permissions, else those a new file gets (0o666 less the umask)."""
    with contextlib.suppress(OSError):
        return out.stat().st_mode & 0o7777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


@contextlib.contextmanager
def _target(out: Path | None) -> Iterator[TextIO]:
    """stdout, or a temporary file beside ``out`` renamed over it when the block ends
    without an error (removed when it raises)."""
    if out is None:
        yield sys.stdout
        sys.stdout.flush()
        return
    fd, temporary = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".part", dir=out.parent)
    try:
        os.chmod(temporary, _mode(out))
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


async def write_export(
    rows: AsyncIterator[tuple[dict[str, Any], str | None]],
    columns: Sequence[str],
    fmt: Format,
    out: Path | None,
) -> int:
    """Write every row (its fields, and its JSON when ready-made) as ``fmt`` to ``out``
    (None: stdout); the number of rows."""
    count = 0
    with _target(out) as stream:
        if fmt is Format.CSV:
            writer = csv.writer(stream)
            writer.writerow(columns)
            async for fields, _ in rows:
                writer.writerow([cell(fields.get(name)) for name in columns])
                count += 1
        else:
            async for fields, text in rows:
                stream.write((text if text is not None else _json(fields)) + "\n")
                count += 1
    return count
