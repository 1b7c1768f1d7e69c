"""The few fields of an Inspect AI log that a judgment needs, and the judgment they make
by the rules of ``domain.eval_mapping``.

``EVAL`` and ``SAMPLE`` are the shapes ``jsonstream.project`` keeps: the run's id, model,
task and time of creation; a sample's id, epoch, whether it errored, its working time, each
scorer's value and each model's tokens and cost.

A scorer's numeric values are on one scale for all of them (``InspectOptions.scales``:
given by ``--scale``, or ``domain.scales.detect`` over every value the import's logs hold
of that scorer, read in a first pass). Its judge, for the skill model, is
``inspect:<scorer>``; the time of its judgments the run's ``created``. Everything else in
a log (messages, attachments, the store, every event but model calls) is skipped
unread; of the model calls, the first that failed and the ids of the last ``CALLS`` that
answered (``model_calls``: how the import finds the gateway's record of each answer,
``importing/answers.py``) are kept.

A sample that failed for a reason that is not the model's (``failure_of``: the evaluation
marked it an error, or one of its model calls failed: refused by the provider or a
gateway, a key, a quota, a budget) is skipped, unless ``InspectOptions.include_errors``.
A sample's model version is the model its provider says answered (``output.model``).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from agentladder.domain.agents import MODEL_FIELD_MAX, AgentConfig
from agentladder.domain.eval_mapping import (
    SUCCESS_FROM,
    agent_id_of,
    contract_id_of,
    normalized_score,
    task_type_of,
    token_cost,
)
from agentladder.domain.scales import Scale, to_ten
from agentladder.errors import InvalidInput, shown_value
from agentladder.importing.items import MODEL_CALL, SAMPLE_ERROR, Item, Named, validation_line
from agentladder.importing.jsonstream import KEEP, Budget, Picked, Shape
from agentladder.services.gateway.request_ids import CLIENT_ID_HEADERS
from agentladder.services.oracle.models import JudgmentRequest

__all__ = [
    "EVAL",
    "HEADER",
    "SAMPLE",
    "InspectOptions",
    "Run",
    "chosen_value",
    "failure_of",
    "model_calls",
    "run_of",
    "sample_item",
]

EVAL: Shape = {
    "eval_id": KEEP, "run_id": KEEP, "task_id": KEEP, "model": KEEP, "task": KEEP,
    "created": KEEP,
}  # fmt: skip
HEADER: Shape = {"eval": EVAL}
"""``header.json``, ``_journal/start.json``, and a ``.json`` log's top level."""
_USAGE: Shape = {"input_tokens": KEEP, "output_tokens": KEEP, "total_cost": KEEP}


def _failed_call(event: Any) -> bool:
    """A model event whose call failed (``ModelEvent.error``: what the call raised)."""
    return isinstance(event, dict) and event.get("event") == "model" and bool(event.get("error"))


def _answered_call(event: Any) -> bool:
    """A model event whose call answered (its ids find the gateway's record of it)."""
    return isinstance(event, dict) and event.get("event") == "model" and not event.get("error")


def _anything(_: Any) -> bool:
    return True


CALL_IDS = 4
"""The response request ids kept of one model event (each response header Inspect read)."""
CALLS = 16
"""The last model calls of a sample whose ids are kept (the last answered is the one
scored; an agent's transcript may hold thousands)."""
_EVENT: Shape = {
    "event": KEEP,
    "error": KEEP,
    "request_ids": Picked({"id": KEEP}, _anything, most=CALL_IDS),
    "call": {"request": {"extra_headers": dict.fromkeys(CLIENT_ID_HEADERS, KEEP)}},
}
SAMPLE: Shape = {
    "id": KEEP,
    "epoch": KEEP,
    "error": {"message": KEEP},
    "events": Picked(_EVENT, _failed_call, most=1, latest=_answered_call, latest_most=CALLS),
    "output": {"model": KEEP},
    "working_time": KEEP,
    "scores": {"*": {"value": KEEP}},
    "score": {"value": KEEP},  # logs before scores were named
    "model_usage": {"*": _USAGE},
}
_CONSTANTS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


class InspectOptions:
    """How logs map: model name -> agent id, a task type for all, the scorer to use, the
    configured agents (their prices), the scale of every scorer (``scale``) and the scale
    decided for each (``scales``; a scorer in neither: 0-10); the lowest score that is a
    success (``success_from``); whether samples that failed for reasons not the model's
    are imported as failures (``include_errors``) rather than skipped."""

    def __init__(
        self,
        agents: Mapping[str, str] | None = None,
        task_type: str | None = None,
        scorer: str | None = None,
        configs: Mapping[str, AgentConfig] | None = None,
        scale: Scale | None = None,
        *,
        success_from: float = SUCCESS_FROM,
        include_errors: bool = False,
    ) -> None:
        self.agents = dict(agents or {})
        self.task_type = task_type
        self.scorer = scorer
        self.configs = dict(configs or {})
        self.scale = scale
        self.scales: dict[str, Scale] = {}
        self.success_from = success_from
        self.include_errors = include_errors

    def scale_of(self, scorer: str) -> Scale:
        """The scale of ``scorer``'s numeric values."""
        return self.scale or self.scales.get(scorer, "0-10")


@dataclass(frozen=True, slots=True)
class Run:
    """An evaluation run, as a log's header names it."""

    eval_id: str
    model: str
    task: str
    created: float | None = None


def run_of(header: Any, where: str, path: str) -> Run:
    """The run of a projected header (``HEADER``); ``InvalidInput("file")`` without one."""
    spec = header.get("eval") if isinstance(header, dict) else None
    if not isinstance(spec, dict):
        raise InvalidInput("file", path, f"{where} names no evaluation run (eval)")
    if not spec.get("eval_id") and all(
        isinstance(spec.get(name), str) for name in ("run_id", "task_id", "created")
    ):
        spec = {**spec, "eval_id": older_eval_id(spec["run_id"], spec["task_id"], spec["created"])}
    values: list[str] = []
    for name in ("eval_id", "model", "task"):
        value = spec.get(name)
        if not isinstance(value, str):
            raise InvalidInput("file", path, f"{where}: eval.{name} is not a string"
                               f" ({shown_value(value)})")  # fmt: skip
        values.append(value)
    eval_id, model, task = values
    return Run(eval_id, model, task, _created(spec.get("created")))


_BASE57 = "23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
"""The digits of Inspect's ids (shortuuid's alphabet: no 0, 1, I, l, O, o)."""


def older_eval_id(run_id: str, task_id: str, created: str) -> str:
    """The eval id of a log written before Inspect logs had one (``eval.eval_id`` null or
    absent: Inspect before 2025), as Inspect itself derives it when it reads such a log, so
    the contracts of that log are the same whichever reader saw it: the 128-bit BLAKE2s of
    ``run_id + task_id + created`` in base 57, 22 digits (the last 22; padded with the
    alphabet's first digit)."""
    number = int.from_bytes(
        hashlib.blake2s(f"{run_id}{task_id}{created}".encode(), digest_size=16).digest(), "big"
    )
    digits = ""
    while number:
        number, digit = divmod(number, 57)
        digits = _BASE57[digit] + digits
    return digits[-22:].rjust(22, _BASE57[0])


def _created(value: Any) -> float | None:
    """The run's creation time (ISO 8601; without a zone, UTC) in seconds; None when
    absent or unreadable (the judgments are then observed when imported)."""
    if not isinstance(value, str):
        return None
    try:
        at = datetime.fromisoformat(value)
    except ValueError:
        return None
    return (at if at.tzinfo else at.replace(tzinfo=UTC)).timestamp()


def chosen_value(fields: Any, scorer: str | None) -> tuple[str, Any] | None:
    """The chosen scorer's name and raw value in a projected sample, if there is one."""
    fields = fields if isinstance(fields, dict) else {}
    scores = fields.get("scores")
    if scores is None and isinstance(fields.get("score"), dict):
        scores = {"score": fields["score"]}
    if not isinstance(scores, dict):
        return None
    name = scorer if scorer is not None else (next(iter(scores)) if len(scores) == 1 else None)
    entry = scores.get(name) if name is not None else None
    return None if name is None or not isinstance(entry, dict) else (name, entry.get("value"))


def sample_item(path: str, fields: Any, budget: Budget, run: Run, options: InspectOptions) -> Item:
    """The judgment of one projected sample (``SAMPLE``), or why there is none."""
    fields = fields if isinstance(fields, dict) else {}
    sample_id, epoch = fields.get("id"), fields.get("epoch")
    where = f"{path}#{sample_id}/{epoch}"
    if budget.over is not None:
        return Item(where, error=f"{budget.over}: holds more than a sample's fields may"
                    " (10,000 values or 1 MiB of text) (...)")  # fmt: skip
    if isinstance(sample_id, bool) or not isinstance(sample_id, int | str):
        return Item(where, error=f"id: must be a string or an integer ({shown_value(sample_id)})")
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
        return Item(where, error=f"epoch: must be an integer from 1 ({shown_value(epoch)})")
    mapped = options.agents.get(run.model)
    agent_id = mapped or agent_id_of(run.model)
    if agent_id is None:
        reason = "cannot be made an agent id; map it with --agent MODEL=AGENT_ID"
        return Item(where, error=f"model: {reason} ({shown_value(run.model)})")
    task_type = options.task_type or task_type_of(run.task)
    if task_type is None:
        reason = "cannot be made a task type; give one with --task-type"
        return Item(where, error=f"task: {reason} ({shown_value(run.task)})")
    failure = failure_of(fields)
    if failure is not None and not options.include_errors:
        reason, message = failure
        return Item(where, error=message, skipped=reason)
    judge: str | None = None  # an errored sample: no scorer scored it
    if failure is not None and failure[0] == SAMPLE_ERROR:
        score, success = 0.0, False
    else:
        scores = fields.get("scores")
        if scores is None and isinstance(fields.get("score"), dict):
            scores = {"score": fields["score"]}
        scored = _score(scores if isinstance(scores, dict) else {}, options)
        if isinstance(scored, str):
            return Item(where, error=scored)
        (score, judge), success = scored, scored[0] >= options.success_from
    try:
        working = _number(fields.get("working_time"), "working_time")
        tokens = _tokens_of(fields.get("model_usage"))
        cost = _cost(fields.get("model_usage"), tokens, options.configs.get(agent_id))
        request = JudgmentRequest(
            agent_id=agent_id,
            contract_id=contract_id_of(run.eval_id, sample_id, epoch),
            task_type=task_type,
            score=score,
            success=success,
            duration_ms=None if working is None else working * 1000.0,
            cost=cost,
            provider=run.model.split("/", 1)[0] if "/" in run.model else "",
            model=run.model[:128],
        )
    except InvalidInput as error:
        return Item(where, error=str(error))
    except ValidationError as error:
        return Item(where, error=validation_line(error, "sample"))
    version = None if failure is not None else served_model(fields)
    named = None if mapped else Named(run.model, model_calls(fields), tokens)
    return Item(where, request, judge=judge, at=run.created, model_version=version,
                provider=request.provider, named=named)  # fmt: skip


_SHOWN = 300
"""Characters of a failure's message kept in the summary."""


def failure_of(fields: Any) -> tuple[str, str] | None:
    """Why a projected sample failed for a reason that is not the model's, if it did:
    (``SAMPLE_ERROR``, the sample's error message) when the evaluation marked it an
    error, else (``MODEL_CALL``, the error) when one of its model calls failed (what the
    call raised after Inspect's retries: a provider's or a gateway's refusal, 401, 404,
    429 ``insufficient_quota``, a budget, a network failure) though the agent's code
    went on."""
    fields = fields if isinstance(fields, dict) else {}
    error = fields.get("error")
    if error is not None:
        text = error.get("message") if isinstance(error, dict) else error
        return SAMPLE_ERROR, _line(text if isinstance(text, str) and text else "an error")
    calls = fields.get("events")
    failed = [c for c in calls if _failed_call(c)] if isinstance(calls, list) else []
    if failed:
        text = failed[0].get("error")
        return MODEL_CALL, _line(text if isinstance(text, str) else "a model call failed")
    return None


def model_calls(fields: Any) -> tuple[tuple[str, ...], ...]:
    """The ids of each answered model call the projected sample kept (the last
    ``CALLS``), in order: the response's request ids (``ModelEvent.request_ids``: the
    gateway's contract id in ``x-request-id``), then the id the request was sent with
    (``call.request.extra_headers``: Inspect's ``x-irid``); calls with none left out."""
    events = fields.get("events") if isinstance(fields, dict) else None
    found: list[tuple[str, ...]] = []
    for event in events if isinstance(events, list) else ():
        if not _answered_call(event):
            continue
        given = event.get("request_ids")
        ids = [one.get("id") for one in given if isinstance(one, dict)] if isinstance(
            given, list) else []  # fmt: skip
        call = event.get("call")
        request = call.get("request") if isinstance(call, dict) else None
        headers = request.get("extra_headers") if isinstance(request, dict) else None
        if isinstance(headers, dict):
            ids += [headers.get(name) for name in CLIENT_ID_HEADERS]
        kept = tuple(dict.fromkeys(i for i in ids if isinstance(i, str) and i.strip()))
        if kept:
            found.append(kept)
    return tuple(found)


def _line(text: str) -> str:
    """``text`` on one line, at most ``_SHOWN`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= _SHOWN else flat[: _SHOWN - 3] + "..."


def served_model(fields: Any) -> str | None:
    """The model the sample's provider says answered (``output.model``: an API's dated
    snapshot, such as ``gpt-4o-2024-08-06`` for ``openai/gpt-4o``); None when it names
    none."""
    output = fields.get("output") if isinstance(fields, dict) else None
    model = output.get("model") if isinstance(output, dict) else None
    return model[:MODEL_FIELD_MAX] if isinstance(model, str) and model.strip() else None


def _score(scores: Mapping[str, Any], options: InspectOptions) -> tuple[float, str | None] | str:
    """The normalized score of the chosen scorer and its judge, or the one-line reason
    there is none."""
    scorer = options.scorer
    if scorer is not None:
        if scorer not in scores:
            names = ", ".join(sorted(scores)) or "none"
            return f"scores: no scorer {scorer!r} in this sample (it has {names}) ({scorer!r})"
        name = scorer
    elif len(scores) == 1:
        (name,) = scores
    elif not scores:
        return (
            "scores: the sample has no score and no error: was the run scored? (`inspect"
            " score LOG` scores a log run without a scorer) (None)"
        )
    else:
        names = ", ".join(sorted(scores))
        return f"scores: several scorers, choose one with --scorer ({names})"
    entry = scores[name]
    raw = entry.get("value") if isinstance(entry, dict) else None
    value = _CONSTANTS.get(raw, raw) if isinstance(raw, str) else raw
    scale = options.scale_of(name)
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        try:
            return to_ten(float(value), scale), f"inspect:{name}"
        except ValueError as error:
            return f"scores.{name}.value: {error} ({shown_value(raw)})"
    normalized = normalized_score(value)
    if normalized is None:
        reason = "is not C, P, I, N, a boolean, or a finite number"
        return f"scores.{name}.value: {reason} ({shown_value(raw)})"
    return normalized, f"inspect:{name}"


def _number(value: Any, field: str) -> float | None:
    """A number of the log (None stays None; NaN and Infinity came as text)."""
    if value is None:
        return None
    if isinstance(value, str) and value in _CONSTANTS:
        return _CONSTANTS[value]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInput(field, value, "must be a number")
    return float(value)


def _tokens_of(usage: Any) -> tuple[int, int]:
    """The input and output tokens of every model the sample used."""
    entries = [u for u in (usage.values() if isinstance(usage, dict) else ()) if u]
    if not all(isinstance(u, dict) for u in entries):
        raise InvalidInput("model_usage", usage, "must map each model to its usage")
    inputs = sum(_tokens(u.get("input_tokens"), "input_tokens") for u in entries)
    outputs = sum(_tokens(u.get("output_tokens"), "output_tokens") for u in entries)
    return inputs, outputs


def _cost(usage: Any, tokens: tuple[int, int], config: AgentConfig | None) -> float:
    """The sample's ``tokens`` at the agent's configured prices; without prices, the cost
    Inspect recorded, if any; else 0 (the import may then price the tokens at the prices
    the store knows for the agent: ``importing/answers.py``)."""
    if config is not None and (config.input_price_per_mtok or config.output_price_per_mtok):
        return token_cost(
            tokens[0], tokens[1], config.input_price_per_mtok, config.output_price_per_mtok
        )
    entries = [u for u in usage.values() if u] if isinstance(usage, dict) else []
    recorded = [_number(u.get("total_cost"), "model_usage.total_cost") for u in entries]
    known = [cost for cost in recorded if cost is not None]
    return float(sum(known)) if known else 0.0


def _tokens(value: Any, field: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"model_usage.{field}", value, "must be an integer")
    return value
