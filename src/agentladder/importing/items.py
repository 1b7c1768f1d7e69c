"""One entry of an import source: where it is, and the judgment it holds or why not."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError

from agentladder.errors import InvalidInput, shown_value
from agentladder.services.oracle.models import JudgmentRequest

__all__ = ["Item", "validation_line"]


@dataclass(frozen=True, slots=True)
class Item:
    """``where`` (``file:line`` or ``file#sample/epoch``), and a request or a refusal;
    ``size``: the bytes it was read from, when they may be many (a JSONL line); ``judge``
    and ``at``: the skill evidence's judge and time when the request names none (an
    Inspect scorer, its run's creation)."""

    where: str
    request: JudgmentRequest | None = None
    error: str | None = None
    size: int = 0
    judge: str | None = None
    at: float | None = None


def validation_line(error: ValidationError, whole: str = "line") -> str:
    """``field: problem (value)`` for the first problem of ``error`` (``whole`` names the
    entry itself, when the problem is not one field's)."""
    details = error.errors()
    first = details[0]
    where = ".".join(str(part) for part in first["loc"]) or whole
    cause = first.get("ctx", {}).get("error")
    reason = cause.reason if isinstance(cause, InvalidInput) else first["msg"]
    if isinstance(cause, ValueError) and not isinstance(cause, InvalidInput):
        reason = str(cause)
    shown = f" ({shown_value(first['input'])})" if "input" in first else ""
    if isinstance(cause, InvalidInput) and not first["loc"]:  # a model's check of a field
        where, shown = cause.field, f" ({shown_value(cause.value)})"
    more = f"; and {len(details) - 1} more" if len(details) > 1 else ""
    return f"{where}: {reason}{shown}{more}"
