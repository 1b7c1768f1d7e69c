"""Langfuse scores as judgments: saved pages of Langfuse's public API
(``langfuse_pages``) read in two passes into the import's items.

The first pass keeps what the scores refer to: each trace's name, tags, latency and
cost; each observation's trace, model, latency and cost; each score config's range; and
the lowest and highest ``NUMERIC`` value of each score name and config: each name's
scale, for its values on no config range, is decided from them unless ``--scale``
(``domain.scales.detect``).
The second pass makes one item per score, in order, by ``score_item``; the files' other
entries make none, and what could not be read is refused where it is.

One score is one judgment (``score_item``):

- agent: the model of the scored observation, else of the trace's observations (one
  model among them), mapped by ``--agent MODEL=AGENT_ID``, else made an agent id as an
  Inspect log's model is;
- task type: the trace's first tag starting ``--task-type-tag`` (``task_type:``; the
  tags the score carries when its trace was not saved), else the trace's name, else
  ``--task-type``;
- contract: ``langfuse:<trace id>[/<observation id>]:<score name>``: one judgment per
  trace (or observation) and score name, so importing again adds nothing;
- score: ``NUMERIC`` on its config's ``minValue``-``maxValue``, else on its name's scale;
  ``BOOLEAN`` 10 or 0 (success: the boolean); ``CATEGORICAL`` by ``--category
  LABEL=SCORE``, refused without one; another ``dataType`` refused;
- judge: ``langfuse:API:<name>``, ``langfuse:EVAL:<name>``, ``langfuse:ANNOTATION:<author>``;
  ``observed_at``: the score's ``timestamp``;
- model version: the model's name as Langfuse recorded it (``importing.versions``), so an
  agent mapped from several dated models starts a new model at each.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentladder.domain.eval_mapping import SUCCESS_FROM, agent_id_of, task_type_of
from agentladder.domain.judgment import CONTRACT_ID_MAX
from agentladder.domain.scales import Scale, detect, to_ten
from agentladder.domain.text import reason_invisible
from agentladder.errors import shown_value
from agentladder.importing.bounds import ImportBounds
from agentladder.importing.items import Item, validation_line
from agentladder.importing.langfuse_pages import entries_of
from agentladder.services.oracle.models import JudgmentRequest

__all__ = [
    "DATA_TYPES",
    "TASK_TYPE_TAG",
    "Known",
    "LangfuseOptions",
    "read_langfuse",
    "score_item",
]

DATA_TYPES = ("NUMERIC", "BOOLEAN", "CATEGORICAL")
TASK_TYPE_TAG = "task_type:"
_NOT_JUDGE = re.compile(r"[^A-Za-z0-9_.:/@+-]+")
_SOURCE = re.compile(r"^[A-Z_]{1,32}$")
_MODEL_MAX = 128


@dataclass
class LangfuseOptions:
    """How scores map: model -> agent id, the task type of scores whose trace says none,
    the tag prefix naming a task type, the scale of numeric scores without a config range
    (else each name's decided from its values), each category label's score on 0-10, the
    lowest score that is a success."""

    agents: Mapping[str, str] = field(default_factory=dict)
    task_type: str | None = None
    task_type_tag: str = TASK_TYPE_TAG
    scale: Scale | None = None
    categories: Mapping[str, float] = field(default_factory=dict)
    success_from: float = SUCCESS_FROM


@dataclass(frozen=True, slots=True)
class Work:
    """A trace or an observation as a judgment needs it."""

    name: str | None = None
    tags: tuple[str, ...] = ()
    model: str | None = None
    trace_id: str | None = None
    seconds: float | None = None
    cost: float | None = None


@dataclass
class Known:
    """What the first pass kept (module docstring)."""

    traces: dict[str, Work] = field(default_factory=dict)
    observations: dict[str, Work] = field(default_factory=dict)
    models: dict[str, set[str]] = field(default_factory=dict)
    """The models the observations of each trace name."""
    ranges: dict[str, tuple[float, float]] = field(default_factory=dict)
    """Each score config's range (``minValue``, ``maxValue``), by its id."""
    values: dict[tuple[str, str], tuple[float, float]] = field(default_factory=dict)
    """The lowest and highest ``NUMERIC`` value of each score name and config id."""
    scales: dict[str, Scale] = field(default_factory=dict)

    def saw(self, kind: str, value: dict[str, Any]) -> None:
        """Keep what a judgment may need of one entry."""
        ident = value.get("id")
        if kind == "trace" and isinstance(ident, str):
            tags = value.get("tags")
            tagged = tuple(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else ()
            self.traces[ident] = Work(_text(value.get("name")), tagged, None, ident,
                                      _amount(value.get("latency")),
                                      _amount(value.get("totalCost")))  # fmt: skip
        elif kind == "observation" and isinstance(ident, str):
            model, trace = _text(value.get("model")), _text(value.get("traceId"))
            cost = value.get("calculatedTotalCost")
            seconds = _amount(value.get("latency"))
            self.observations[ident] = Work(None, (), model, trace, seconds, _amount(cost))
            if model is not None and trace is not None:
                self.models.setdefault(trace, set()).add(model)
        elif kind == "config" and isinstance(ident, str):
            low, high = _number(value.get("minValue")), _number(value.get("maxValue"))
            if low is not None and high is not None and high > low:
                self.ranges[ident] = (low, high)
        elif kind == "score" and value.get("dataType") == "NUMERIC":
            number, name, config = (
                _number(value.get("value")),
                value.get("name"),
                value.get("configId"),
            )
            if number is None or not isinstance(name, str):
                return
            key = (name, config if isinstance(config, str) else "")
            low, high = self.values.get(key, (number, number))
            self.values[key] = (min(low, number), max(high, number))

    def decide_scales(self, scale: Scale | None) -> None:
        """Each score name's scale, from its values on no config range (unless ``scale``)."""
        spans: dict[str, tuple[float, float]] = {}
        for (name, config), (low, high) in self.values.items():
            if config not in self.ranges:
                was = spans.get(name, (low, high))
                spans[name] = (min(was[0], low), max(was[1], high))
        self.scales = {name: scale or detect(*span) for name, span in spans.items()}


def read_langfuse(
    files: Sequence[Path], options: LangfuseOptions, bounds: ImportBounds | None = None
) -> Iterator[Item]:
    """One item per score of ``files`` (and per entry or file refused), in order."""
    bounds = bounds or ImportBounds()
    known = Known()
    counts = {"score": 0, "trace": 0, "observation": 0, "config": 0}
    for path in files:
        for entry in entries_of(path, bounds):
            if entry.kind is not None and entry.value is not None:
                counts[entry.kind] += 1
                known.saw(entry.kind, entry.value)
    known.decide_scales(options.scale)
    for path in files:
        for entry in entries_of(path, bounds):
            if entry.error is not None:
                yield Item(entry.where, error=entry.error)
            elif entry.kind == "score" and entry.value is not None:
                yield score_item(entry.where, entry.value, known, options)
    yield Item("langfuse", note=f"langfuse: read {counts['score']} scores, {counts['trace']}"
               f" traces, {counts['observation']} observations, {counts['config']} score"
               " configs")  # fmt: skip


def score_item(where: str, score: dict[str, Any], known: Known, options: LangfuseOptions) -> Item:
    """The judgment of one score, or the one-line reason there is none (module docstring)."""
    data_type = score.get("dataType")
    if data_type not in DATA_TYPES:
        return Item(where, error=f"dataType: is not {', '.join(DATA_TYPES[:2])} or"
                    f" {DATA_TYPES[2]} ({shown_value(data_type)})")  # fmt: skip
    name, trace_id = score.get("name"), score.get("traceId")
    if not isinstance(name, str) or not name.strip():
        return Item(where, error=f"name: must be the score's name ({shown_value(name)})")
    if not isinstance(trace_id, str) or not trace_id:
        return Item(where, error="traceId: the score names no trace (a session's or a dataset"
                    f" run's score judges no agent's work) ({shown_value(trace_id)})")  # fmt: skip
    observation_id = score.get("observationId") or None
    work = _work(trace_id, observation_id, known)
    if isinstance(work, str):
        return Item(where, error=work)
    model = work.model or ""
    agent_id = options.agents.get(model) or agent_id_of(model)
    if agent_id is None:
        reason = "cannot be made an agent id; map it with --agent MODEL=AGENT_ID"
        return Item(where, error=f"model: {reason} ({shown_value(model)})")
    task_type = _task_type(known.traces.get(trace_id), score.get("trace"), options)
    if task_type is None:
        return Item(where, error="traceId: the trace is not among those read, or has no"
                    " name or task type tag; give --task-type"
                    f" ({shown_value(trace_id)})")  # fmt: skip
    scored = _score(score, data_type, name, known, options)
    if isinstance(scored, str):
        return Item(where, error=scored)
    judge = _judge(score, name)
    if judge is None:
        return Item(where, error="source: must be a Langfuse score source (API, EVAL,"
                    f" ANNOTATION) ({shown_value(score.get('source'))})")  # fmt: skip
    observed = _time(score.get("timestamp"))
    if observed is None:
        return Item(where, error="timestamp: must be an ISO 8601 time"
                    f" ({shown_value(score.get('timestamp'))})")  # fmt: skip
    target = trace_id if observation_id is None else f"{trace_id}/{observation_id}"
    try:
        request = JudgmentRequest(
            agent_id=agent_id,
            contract_id=_contract(f"langfuse:{target}:{name}"),
            task_type=task_type,
            score=scored[0],
            success=scored[1],
            duration_ms=None if work.seconds is None else work.seconds * 1000.0,
            cost=work.cost or 0.0,
            model=model[:_MODEL_MAX],
            judge=judge,
            observed_at=observed,
        )
    except ValidationError as error:
        return Item(where, error=validation_line(error, "score"))
    return Item(where, request, model_version=model[:_MODEL_MAX])


def _work(trace_id: str, observation_id: Any, known: Known) -> Work | str:
    """The observation scored (its trace's cost and time when it has none), else the trace
    with its one model; or why there is none."""
    if observation_id is not None:
        found = known.observations.get(str(observation_id))
        if found is None:
            return ("observationId: is not among the observations read: save GET"
                    f" /api/public/observations too ({shown_value(observation_id)})")  # fmt: skip
        if found.model is None:
            return ("observationId: the observation names no model (score a generation)"
                    f" ({shown_value(observation_id)})")  # fmt: skip
        return found
    models = sorted(known.models.get(trace_id, ()))
    if len(models) != 1:
        said = "no observation of the trace names a model: save GET /api/public/observations"
        if models:
            said = f"the trace's observations name several models ({', '.join(models)}): score one"
        return f"traceId: {said} ({shown_value(trace_id)})"
    trace = known.traces.get(trace_id, Work())
    return Work(model=models[0], seconds=trace.seconds, cost=trace.cost)


def _task_type(trace: Work | None, given: Any, options: LangfuseOptions) -> str | None:
    """The trace's task type tag (of the trace saved, else of the trace's fields the score
    carries, ``given``: ``GET /api/public/scores`` gives its ``tags``), else its name,
    else ``--task-type``."""
    tags: Any = trace.tags if trace is not None else None
    if tags is None and isinstance(given, dict):
        tags = given.get("tags")
    prefix = options.task_type_tag
    for tag in tags if isinstance(tags, list | tuple) else ():
        found = task_type_of(tag[len(prefix) :]) if isinstance(tag, str) else None
        if isinstance(tag, str) and tag.startswith(prefix) and found:
            return found
    if trace is not None and trace.name is not None and (found := task_type_of(trace.name)):
        return found
    return options.task_type


def _score(
    score: dict[str, Any], data_type: str, name: str, known: Known, options: LangfuseOptions
) -> tuple[float, bool] | str:
    """The score on 0-10 and whether it succeeded, or why not."""
    raw = score.get("value")
    if data_type == "BOOLEAN":
        if raw not in (0, 1) or isinstance(raw, bool):
            return f"value: a BOOLEAN score must be 1 or 0 ({shown_value(raw)})"
        return (10.0, True) if raw == 1 else (0.0, False)
    if data_type == "CATEGORICAL":
        label = score.get("stringValue")
        if not isinstance(label, str) or label not in options.categories:
            mapped = ", ".join(sorted(options.categories)) or "none"
            return ("stringValue: no --category LABEL=SCORE maps this label (mapped:"
                    f" {mapped}) ({shown_value(label)})")  # fmt: skip
        value = options.categories[label]
        return value, value >= options.success_from
    number = _number(raw)
    if number is None:
        return f"value: a NUMERIC score must be a finite number ({shown_value(raw)})"
    config = score.get("configId")
    span = known.ranges.get(config) if isinstance(config, str) else None
    if span is not None:
        low, high = span
        if not low <= number <= high:
            return f"value: is outside its score config's range {low:g}-{high:g} ({number:g})"
        value = 10.0 * (number - low) / (high - low)
    else:
        scale = options.scale or known.scales.get(name, "0-10")  # decided in the first pass
        try:
            value = to_ten(number, scale)
        except ValueError as error:
            return f"value: {error} ({number:g})"
    return value, value >= options.success_from


def _judge(score: dict[str, Any], name: str) -> str | None:
    """``langfuse:<source>:<name>``, or for a person's annotation ``langfuse:ANNOTATION:
    <author>``; None for a source that is not a Langfuse source's name."""
    source = score.get("source")
    if not isinstance(source, str) or not _SOURCE.match(source):
        return None
    if source == "ANNOTATION":
        author = score.get("authorUserId")
        who = author if isinstance(author, str) and author else None
        text = "langfuse:ANNOTATION" + (f":{who}" if who else "")
    else:
        text = f"langfuse:{source}:{name}"
    return _NOT_JUDGE.sub("-", text)[:128]


def _contract(plain: str) -> str:
    """``plain``, or ``langfuse:sha256:<hex>`` of it when it is too long or not shown."""
    if len(plain) <= CONTRACT_ID_MAX and plain.isprintable() and reason_invisible(plain) is None:
        return plain
    return "langfuse:sha256:" + hashlib.sha256(plain.encode()).hexdigest()


def _time(value: Any) -> datetime | None:
    """An ISO 8601 time (without a zone, UTC); None when it is not one."""
    if not isinstance(value, str):
        return None
    try:
        at = datetime.fromisoformat(value)
    except ValueError:
        return None
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def _number(value: Any) -> float | None:
    """A finite number (not a boolean), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _amount(value: Any) -> float | None:
    """A finite number of at least 0, else None."""
    number = _number(value)
    return number if number is not None and number >= 0 else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
