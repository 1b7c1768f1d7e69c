"""One entry of an import source: where it is, and the judgment it holds or why not."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError

from agentladder.errors import InvalidInput, shown_value
from agentladder.services.oracle.models import JudgmentRequest

__all__ = [
    "LINE_ERROR", "MODEL_CALL", "SAMPLE_ERROR", "SKIPPED", "Item", "Named", "validation_line",
]  # fmt: skip

SAMPLE_ERROR = "sample_error"
"""Skipped: the evaluation marked the sample an error (Inspect's ``error``)."""
MODEL_CALL = "model_call"
"""Skipped: one of the sample's model calls failed (refused or failed by the provider or
a gateway) though the agent's code went on."""
LINE_ERROR = "line_error"
"""Skipped: a JSONL line's ``error`` says the task failed for a reason not the agent's."""
SKIPPED = (SAMPLE_ERROR, MODEL_CALL, LINE_ERROR)


@dataclass(frozen=True, slots=True)
class Named:
    """What an Inspect sample whose agent no ``--agent`` mapped says of who answered:
    the run's model name (its agent id was derived from it), the ids of its answered
    model calls in order (``inspect_samples.model_calls``) and its tokens, for the import
    to settle the agent, the contract and the cost against the store
    (``importing/answers.py``)."""

    model: str
    calls: tuple[tuple[str, ...], ...] = ()
    tokens: tuple[int, int] = (0, 0)


@dataclass(frozen=True, slots=True)
class Item:
    """``where`` (``file:line``, ``file#sample/epoch``, or a file), and a request or a
    refusal (``error``); ``size``: the bytes it was read from, when they may be many (a
    JSONL line); ``judge`` and ``at``: the skill evidence's judge and time when the request
    names none (an Inspect scorer, its run's creation); ``model_version`` and
    ``provider``: the version of the model it measured, if known.

    An entry that is no judgment and no refusal: ``skipped`` (one of ``SKIPPED``: a
    failure that was not the agent's, ``error`` saying what failed), or ``note`` (a line
    for the summary: what was left out of a folder, an eval set's manifests). ``named``:
    an Inspect sample's agent to settle against the store (``Named``)."""

    where: str
    request: JudgmentRequest | None = None
    error: str | None = None
    size: int = 0
    judge: str | None = None
    at: float | None = None
    model_version: str | None = None
    provider: str = ""
    skipped: str | None = None
    note: str | None = None
    named: Named | None = None


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
