"""Pages of Langfuse's public API saved as files: each entry of each page, where it is,
and what it is, told by its fields.

A file holds pages as ``GET /api/public/scores``, ``/traces``, ``/observations`` and
``/score-configs`` answer them (``{"data": [...], "meta": {...}}``): a ``.json`` file one
page (or a list of entries), a ``.jsonl`` file one page or one entry a line. An entry is
a score when it has ``dataType`` and ``source``, a score config when it has ``dataType``
alone, an observation when it has ``startTime``, a trace when it has ``id`` and
``timestamp`` and none of those. Where an entry is: ``FILE#N`` (the Nth entry of a
``.json`` page), ``FILE:LINE`` (a JSONL line that is an entry) or ``FILE:LINE#N``.

A ``.json`` file is read whole, at most ``ImportBounds.max_member`` bytes; a JSONL line at
most ``max_line``. A file or line that is not such a page or entry is one refused entry
naming it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentladder.errors import shown_value
from agentladder.importing.bounds import ImportBounds, shown_size

__all__ = ["Entry", "Kind", "entries_of", "kind_of"]

Kind = Literal["score", "config", "observation", "trace"]


@dataclass(frozen=True, slots=True)
class Entry:
    """One entry of a page (``kind`` and ``value``), or why a file or line holds none
    (``error``)."""

    where: str
    kind: Kind | None = None
    value: dict[str, Any] | None = None
    error: str | None = None


def kind_of(value: Any) -> Kind | None:
    """What a page's entry is, by its fields; None when it is none of the four."""
    if not isinstance(value, dict):
        return None
    if "dataType" in value:
        return "score" if "source" in value else "config"
    if "startTime" in value:
        return "observation"
    if "id" in value and "timestamp" in value:
        return "trace"
    return None


def entries_of(path: Path, bounds: ImportBounds) -> Iterator[Entry]:
    """Every entry of the file at ``path``, in order (module docstring)."""
    try:
        if path.suffix == ".jsonl":
            yield from _lines(path, bounds)
            return
        size = path.stat().st_size
        if size > bounds.max_member:
            yield Entry(str(path), error=f"file: longer than {shown_size(bounds.max_member)},"
                        f" the bound (--max-member) ({size:,} bytes)")  # fmt: skip
            return
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError as error:
        yield Entry(str(path), error=f"file: cannot be read: {error.strerror or error}"
                    f" ({shown_value(str(path))})")  # fmt: skip
        return
    yield from _page(str(path), text, f"{path}#")


def _lines(path: Path, bounds: ImportBounds) -> Iterator[Entry]:
    with path.open("rb") as lines:
        number = 0
        while line := lines.readline(bounds.max_line + 1):
            number += 1
            where = f"{path}:{number}"
            if len(line) > bounds.max_line and not line.endswith(b"\n"):
                while (rest := lines.readline(1 << 20)) and not rest.endswith(b"\n"):
                    pass
                yield Entry(where, error=f"line: longer than {shown_size(bounds.max_line)},"
                            " the bound (--max-line) (...)")  # fmt: skip
                continue
            text = line.decode("utf-8", errors="replace")
            if text.strip():
                yield from _page(where, text, f"{where}#")


def _page(where: str, text: str, prefix: str) -> Iterator[Entry]:
    """The entries of one JSON value: a page, a list of entries, or one entry."""
    try:
        value = json.loads(text)
    except ValueError as error:
        yield Entry(where, error=f"json: is not JSON: {error} ({shown_value(text[:40])})")
        return
    if isinstance(value, dict) and "data" in value and kind_of(value) is None:
        value = value["data"]
        if not isinstance(value, list):
            yield Entry(where, error=f"data: must be a list of entries ({shown_value(value)})")
            return
    elif not isinstance(value, list):
        value = [value]
        prefix = where
    if not value:
        yield Entry(where, error="data: the page holds no entry ([])")
    for number, entry in enumerate(value, 1):
        at = prefix if prefix == where else f"{prefix}{number}"
        kind = kind_of(entry)
        if kind is None:
            keys = sorted(entry)[:6] if isinstance(entry, dict) else entry
            yield Entry(at, error="entry: is not a Langfuse score, score config, observation"
                        f" or trace ({shown_value(keys)})")  # fmt: skip
        else:
            assert isinstance(entry, dict)
            yield Entry(at, kind, entry)
