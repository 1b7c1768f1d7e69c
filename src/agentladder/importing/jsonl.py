"""JSONL: one judgment per line, with the fields of ``POST /oracle/judgments`` and two an
import reads itself (``IMPORT_FIELDS``: ``model_version``, ``error``).

Blank lines are skipped. A line that is not such an object is refused with its line
number, field and value. ``task_type`` given to the import is the task type of the lines
that name none, and ``scale`` (``--scale``) the scale of the lines that name none (as the
API, 0-10 without it). The file is read as it goes, a line at a time, and a line longer than the
bound (``ImportBounds.max_line``, without its newline) is refused with its number without
being read whole: the rest of it is skipped in pieces.

A line without ``success`` succeeded when its score (on 0-10, once its scale is mapped) is
at least ``success_from`` (``--success-threshold``); a line without a score keeps the
API's default (true). A line whose ``error`` says the task failed for a reason that is not
the agent's is skipped (``LINE_ERROR``), or with ``include_errors`` imported as a failure.
A file that cannot be opened, or holds no line that is not blank, is one refused entry
naming the file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import ValidationError

from agentladder.domain.agents import MODEL_FIELD_MAX
from agentladder.domain.eval_mapping import SUCCESS_FROM
from agentladder.errors import shown_value
from agentladder.importing.bounds import ImportBounds, shown_size
from agentladder.importing.items import LINE_ERROR, Item, validation_line
from agentladder.services.oracle.models import JudgmentRequest

__all__ = ["ERROR_MAX", "IMPORT_FIELDS", "read_jsonl"]

_PIECE = 1 << 20
IMPORT_FIELDS = ("model_version", "error")
"""Fields of a line that the import reads and the API does not take."""
ERROR_MAX = 10_000
"""The longest ``error`` a line may give."""
_MARKS = tuple(f'"{name}"'.encode() for name in IMPORT_FIELDS)


def read_jsonl(
    path: Path,
    task_type: str | None = None,
    max_line: int | None = None,
    scale: str | None = None,
    *,
    success_from: float = SUCCESS_FROM,
    include_errors: bool = False,
) -> Iterator[Item]:
    """Every non-blank line of ``path`` as an item, in order (read as it goes), each at
    most ``max_line`` bytes (default ``ImportBounds``'); one refused item naming the file
    when it cannot be opened or holds none."""
    max_line = ImportBounds().max_line if max_line is None else max_line
    try:
        lines = path.open("rb")
    except OSError as error:
        yield Item(str(path), error=f"file: cannot be read: {error.strerror or error}"
                   f" ({shown_value(str(path))})")  # fmt: skip
        return
    entries = 0
    with lines:
        number = 0
        while line := lines.readline(max_line + 1):
            number += 1
            where = f"{path}:{number}"
            if len(line) > max_line and not line.endswith(b"\n"):
                size = len(line) + _skip_line(lines)
                entries += 1
                yield Item(where, error=f"line: longer than {shown_size(max_line)}, the bound"
                           f" (--max-line) ({size:,} bytes)", size=size)  # fmt: skip
                continue
            text = line.decode("utf-8", errors="replace")
            if not text.strip():
                continue
            entries += 1
            yield _item(where, line, text, task_type, scale, success_from, include_errors)
    if not entries:
        yield Item(str(path), error="file: holds no judgment: it is empty or every line is"
                   f" blank ({shown_value(str(path))})")  # fmt: skip


def _item(
    where: str, line: bytes, text: str, task_type: str | None, scale: str | None,
    success_from: float, include_errors: bool,
) -> Item:  # fmt: skip
    """The item of one non-blank line."""
    size = len(line)
    extra: dict[str, Any] = {}
    try:
        if scale is None and not any(mark in line for mark in _MARKS):
            request = JudgmentRequest.model_validate_json(text)
        else:
            value = _object(text)
            if value is None:  # refused as the API would: not JSON
                request = JudgmentRequest.model_validate_json(text)
            else:
                if isinstance(value, dict):
                    extra = {name: value.pop(name) for name in IMPORT_FIELDS if name in value}
                    if scale is not None and "scale" not in value:
                        value["scale"] = scale
                request = JudgmentRequest.model_validate(value)
    except ValidationError as error:
        return Item(where, error=validation_line(error), size=size)
    version, error_text = extra.get("model_version"), extra.get("error")
    problem = _version_problem(version) or _error_problem(error_text)
    if problem is not None:
        return Item(where, error=problem, size=size)
    given = request.model_fields_set
    if task_type is not None and "task_type" not in given:
        request = request.model_copy(update={"task_type": task_type})
    if error_text is not None:
        flat = " ".join(error_text.split())
        if not include_errors:
            return Item(where, error=flat[:300], size=size, skipped=LINE_ERROR)
        if "success" in given and request.success:
            return Item(where, error="success: is true, but the line has an error (True)",
                        size=size)  # fmt: skip
        request = request.model_copy(update={"success": False})
    elif "success" not in given and request.score is not None:
        request = request.model_copy(update={"success": request.score >= success_from})
    return Item(where, request, size=size, model_version=version, provider=request.provider)


def _object(text: str) -> Any:
    """The line's JSON value; None when it is not JSON."""
    try:
        return json.loads(text)
    except ValueError:
        return None


def _version_problem(value: Any) -> str | None:
    """Why a line's ``model_version`` is refused, or None (absent or null: no version)."""
    if value is None:
        return None
    if (
        not isinstance(value, str)
        or not value.strip()
        or len(value) > MODEL_FIELD_MAX
        or not value.isprintable()
    ):
        return (
            f"model_version: must be a printable string of 1 to {MODEL_FIELD_MAX} characters"
            f" ({shown_value(value)})"
        )
    return None


def _error_problem(value: Any) -> str | None:
    """Why a line's ``error`` is refused, or None (absent or null: no error)."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > ERROR_MAX:
        return (
            f"error: must say why the task failed, a string of 1 to {ERROR_MAX:,} characters,"
            f" or null ({shown_value(value)})"
        )
    return None


def _skip_line(lines: BinaryIO) -> int:
    """Read past the rest of the current line; the bytes skipped, its newline left out."""
    skipped = 0
    while piece := lines.readline(_PIECE):
        if piece.endswith(b"\n"):
            return skipped + len(piece) - 1
        skipped += len(piece)
    return skipped
