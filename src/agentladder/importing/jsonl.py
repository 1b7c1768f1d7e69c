"""JSONL: one judgment per line, with exactly the fields of ``POST /oracle/judgments``.

Blank lines are skipped. A line that is not such an object is refused with its line
number, field and value. ``task_type`` given to the import is the task type of the lines
that name none.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from agentladder.importing.items import Item, validation_line
from agentladder.services.oracle.models import JudgmentRequest

__all__ = ["read_jsonl"]


def read_jsonl(path: Path, task_type: str | None = None) -> Iterator[Item]:
    """Every non-blank line of ``path`` as an item, in order (read as it goes)."""
    with path.open(encoding="utf-8", errors="replace", newline="\n") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                request = JudgmentRequest.model_validate_json(line)
            except ValidationError as error:
                yield Item(where, error=validation_line(error))
                continue
            if task_type is not None and "task_type" not in request.model_fields_set:
                request = request.model_copy(update={"task_type": task_type})
            yield Item(where, request)
