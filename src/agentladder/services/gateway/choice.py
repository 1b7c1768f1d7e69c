"""What a gateway request's ``model`` and headers ask for: one agent, or a routing.

``model`` is, in this order: an agent id (direct: that agent, asked whatever its health,
no fallback), ``route:<task_type>`` or ``route:<task_type>:<strategy>`` (best, explore,
cheapest_above), or an alias of ``gateway.models``. Headers add to a routing:

- ``x-agentladder-task-type``: the task type, when the model names none (a different one
  from the model's is refused: the request cannot be of two types);
- ``x-agentladder-tags``: capability tags, comma-separated, added to the model's;
- ``x-agentladder-quality-floor``: the skill the chosen agent must be shown to have; it
  makes the strategy ``cheapest_above`` unless the model names another one (refused then:
  only cheapest_above has a floor), and the stricter of two floors holds;
- ``x-agentladder-max-cost``: the most the agent may cost per round (its
  ``estimated_cost_per_round``); the lower of two caps holds.

Pure: no I/O. Every refusal is an ``InvalidInput`` naming the field (``model`` or the
header) and its value.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from pydantic import ValidationError

from agentladder.domain.judgment import TASK_TYPE_PATTERN
from agentladder.domain.routing.spec import RouteSpec, Strategy
from agentladder.errors import InvalidInput, UnknownModel
from agentladder.services.gateway.settings import GatewayModel

__all__ = [
    "FLOOR_HEADER",
    "MAX_COST_HEADER",
    "ROUTE_PREFIX",
    "TAGS_HEADER",
    "TASK_TYPE_HEADER",
    "Choice",
    "choose",
]

ROUTE_PREFIX = "route:"
TASK_TYPE_HEADER = "x-agentladder-task-type"
TAGS_HEADER = "x-agentladder-tags"
FLOOR_HEADER = "x-agentladder-quality-floor"
MAX_COST_HEADER = "x-agentladder-max-cost"


@dataclass(frozen=True, slots=True)
class Choice:
    """One agent (``agent_id``) or a routing (``spec``: ``count`` is how many agents may be
    tried, best first); ``task_type`` is the request's, either way."""

    model: str
    agent_id: str | None = None
    spec: RouteSpec | None = None
    task_type: str | None = None


def _number(headers: Mapping[str, str], name: str) -> float | None:
    raw = headers.get(name)
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise InvalidInput(name, raw, "must be a number") from None
    if not math.isfinite(value) or value < 0:
        raise InvalidInput(name, raw, "must be a finite number, 0 or more")
    return value


def _stricter(
    first: float | None, second: float | None, pick: Callable[[float, float], float]
) -> float | None:
    if first is None or second is None:
        return first if second is None else second
    return pick(first, second)


def _task_type(headers: Mapping[str, str]) -> str | None:
    asked = headers.get(TASK_TYPE_HEADER)
    if asked is not None and not re.fullmatch(TASK_TYPE_PATTERN, asked):
        raise InvalidInput(TASK_TYPE_HEADER, asked, f"must match {TASK_TYPE_PATTERN}")
    return asked


def _route_form(model: str) -> GatewayModel:
    """``route:<task_type>[:<strategy>]`` as the alias it amounts to."""
    parts = model[len(ROUTE_PREFIX) :].split(":")
    if len(parts) > 2 or not parts[0]:
        raise UnknownModel(model, "use route:<task_type> or route:<task_type>:<strategy>")
    fields: dict[str, object] = {"task_type": parts[0]}
    if len(parts) == 2:
        if parts[1] not in {s.value for s in Strategy}:
            raise UnknownModel(
                model, f"unknown strategy {parts[1]!r}: use best, explore or cheapest_above"
            )
        fields["strategy"] = parts[1]
    try:
        return GatewayModel.model_validate(fields)
    except ValidationError as error:
        reason = error.errors()[0]["msg"].removeprefix("Value error, ")
        raise UnknownModel(model, f"task type {parts[0]!r}: {reason}") from None


def _with_headers(form: GatewayModel, headers: Mapping[str, str]) -> dict[str, object]:
    """The routing's fields: the form's, with the headers added."""
    task_type = form.task_type
    asked = _task_type(headers)
    if asked is not None and task_type is not None and asked != task_type:
        raise InvalidInput(
            TASK_TYPE_HEADER, asked, f"differs from the model's task type {task_type!r}"
        )
    task_type = task_type or asked
    tags = list(form.tags)
    for tag in (headers.get(TAGS_HEADER) or "").split(","):
        if tag.strip() and tag.strip() not in tags:
            tags.append(tag.strip())
    strategy = form.strategy
    floor = _number(headers, FLOOR_HEADER)
    if floor is not None:
        if floor > 10:
            raise InvalidInput(FLOOR_HEADER, headers[FLOOR_HEADER], "must be from 0 to 10")
        named = "strategy" in form.model_fields_set
        if named and strategy is not Strategy.CHEAPEST_ABOVE:
            raise InvalidInput(
                FLOOR_HEADER, headers[FLOOR_HEADER],
                f"applies to strategy cheapest_above only; the model asks for {strategy.value}",
            )  # fmt: skip
        strategy = Strategy.CHEAPEST_ABOVE
    return {
        "task_type": task_type,
        "tags": tuple(tags),
        "strategy": strategy,
        "quality_floor": _stricter(form.quality_floor, floor, max),
        "max_cost_per_round": _stricter(
            form.max_cost_per_round, _number(headers, MAX_COST_HEADER), min
        ),
    }


def choose(
    model: object,
    headers: Mapping[str, str],
    *,
    agents: Collection[str],
    aliases: Mapping[str, GatewayModel],
    attempts: int,
) -> Choice:
    """What ``model`` (with ``headers``, lower-case names) asks for. ``agents``: the agent
    ids a request may name directly; ``attempts``: how many agents a routing may try."""
    if not isinstance(model, str) or not model:
        raise InvalidInput("model", model, "must be a non-empty string")
    if model in agents:
        return Choice(model=model, agent_id=model, task_type=_task_type(headers))
    if model.startswith(ROUTE_PREFIX):
        form = _route_form(model)
    elif model in aliases:
        form = aliases[model]
    else:
        raise UnknownModel(
            model, "names no agent, route:<task_type>[:<strategy>] or alias (see GET /v1/models)"
        )
    fields = _with_headers(form, headers)
    try:
        spec = RouteSpec.model_validate({**fields, "count": max(2, attempts)})
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "model"
        reason = first["msg"].removeprefix("Value error, ")
        raise InvalidInput("model", model, f"{where}: {reason}") from None
    return Choice(model=model, spec=spec, task_type=spec.task_type)
