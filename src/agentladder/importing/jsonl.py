"""JSONL: one judgment per line, with exactly the fields of ``POST /oracle/judgments``.

Blank lines are skipped. A line that is not such an object is refused with its line
number, field and value. ``task_type`` given to the import is the task type of the lines
that name none, and ``scale`` (``--scale``) the scale of the lines that name none (as the
API, 0-10 without it). The file is read as it goes, a line at a time, and a line longer than the
bound (``ImportBounds.max_line``, without its newline) is refused with its number without
being read whole: the rest of it is skipped in pieces.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import ValidationError

from agentladder.importing.bounds import ImportBounds, shown_size
from agentladder.importing.items import Item, validation_line
from agentladder.services.oracle.models import JudgmentRequest

__all__ = ["read_jsonl"]

_PIECE = 1 << 20


def read_jsonl(
    path: Path, task_type: str | None = None, max_line: int | None = None, scale: str | None = None
) -> Iterator[Item]:
    """Every non-blank line of ``path`` as an item, in order (read as it goes), each at
    most ``max_line`` bytes (default ``ImportBounds``')."""
    max_line = ImportBounds().max_line if max_line is None else max_line
    with path.open("rb") as lines:
        number = 0
        while line := lines.readline(max_line + 1):
            number += 1
            where = f"{path}:{number}"
            if len(line) > max_line and not line.endswith(b"\n"):
                size = len(line) + _skip_line(lines)
                yield Item(where, error=f"line: longer than {shown_size(max_line)}, the bound"
                           f" (--max-line) ({size:,} bytes)", size=size)  # fmt: skip
                continue
            text = line.decode("utf-8", errors="replace")
            if not text.strip():
                continue
            try:
                request = (
                    JudgmentRequest.model_validate_json(text)
                    if scale is None
                    else JudgmentRequest.model_validate(_scaled(text, scale))
                )
            except ValidationError as error:
                yield Item(where, error=validation_line(error), size=len(line))
                continue
            if task_type is not None and "task_type" not in request.model_fields_set:
                request = request.model_copy(update={"task_type": task_type})
            yield Item(where, request, size=len(line))


def _scaled(text: str, scale: str) -> Any:
    """The line's object with ``scale`` where it names none (anything else as it is, for
    the model to refuse)."""
    try:
        value = json.loads(text)
    except ValueError:
        return text  # refused below as the API would: not an object
    if isinstance(value, dict) and "scale" not in value:
        value["scale"] = scale
    return value


def _skip_line(lines: BinaryIO) -> int:
    """Read past the rest of the current line; the bytes skipped, its newline left out."""
    skipped = 0
    while piece := lines.readline(_PIECE):
        if piece.endswith(b"\n"):
            return skipped + len(piece) - 1
        skipped += len(piece)
    return skipped
