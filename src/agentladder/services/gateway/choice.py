"""What a gateway request's ``model`` and headers ask for: one agent, or a routing.

``model`` is, in this order: an agent id (direct: that agent, asked whatever its health,
no fallback), a route form (``route``, ``route:<task_type>[:<strategy>[@<floor>[:<c>]]]``:
``model_names.py``), an alias of ``gateway.models``, or ``route`` (bare, when no agent or
alias has that name). Headers add to a routing:

- ``x-agentladder-task-type``: the task type, when the model names none (a different one
  from the model's is refused: the request cannot be of two types);
- ``x-agentladder-tags``: capability tags, comma-separated, added to the model's;
- ``x-agentladder-quality-floor`` (a skill, 0-10) or ``x-agentladder-quality-floor-share``
  (a share of the reference agent's skill, above 0 up to 1): the floor the chosen agent
  must clear; either makes the strategy ``cheapest_above`` unless the model names another
  one (refused then: only cheapest_above has a floor). With the model's own floor of the
  same kind the higher holds; of the other kind the request is refused (a share and a
  skill cannot be compared before routing), as is sending both headers;
- ``x-agentladder-confidence``: the least probability an agent clears the floor with
  (0.5 to under 1), cheapest_above only; with the model's own, the higher holds;
- ``x-agentladder-max-cost``: the most the agent may cost per round (its
  ``estimated_cost_per_round``); the lower of two caps holds.

The routing's ``count`` is ``gateway.max_attempts``: the agents that may be tried, in
order (1: no fallback); its ``explore_share`` the request's share over them, so that the
share is of requests (an explored agent is tried first).

Pure: no I/O. Every refusal is an ``InvalidInput`` naming the field (``model`` or the
header) and its value; a model that names nothing known, ``UnknownModel``.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from pydantic import ValidationError

from agentladder.domain.judgment import TASK_TYPE_PATTERN
from agentladder.domain.routing.spec import RouteSpec, Strategy
from agentladder.errors import InvalidInput, UnknownModel
from agentladder.services.gateway.model_names import (
    ROUTE,
    ROUTE_PREFIX,
    Form,
    alias_form,
    route_form,
)
from agentladder.services.gateway.settings import GatewayModel

__all__ = [
    "CONFIDENCE_HEADER",
    "FLOOR_HEADER",
    "FLOOR_SHARE_HEADER",
    "MAX_COST_HEADER",
    "ROUTE",
    "ROUTE_PREFIX",
    "TAGS_HEADER",
    "TASK_TYPE_HEADER",
    "Choice",
    "choose",
]

TASK_TYPE_HEADER = "x-agentladder-task-type"
TAGS_HEADER = "x-agentladder-tags"
FLOOR_HEADER = "x-agentladder-quality-floor"
FLOOR_SHARE_HEADER = "x-agentladder-quality-floor-share"
CONFIDENCE_HEADER = "x-agentladder-confidence"
MAX_COST_HEADER = "x-agentladder-max-cost"


@dataclass(frozen=True, slots=True)
class Choice:
    """One agent (``agent_id``) or a routing (``spec``: ``count`` is how many agents may be
    tried, best first); ``task_type`` is the request's, either way. ``classified``: how a
    routed request that named no task type got one (``rule``, ``agent``, ``default``, or
    ``failed``: none found), with ``classifier_cost``, the classifier agent's call in
    dollars when it was asked."""

    model: str
    agent_id: str | None = None
    spec: RouteSpec | None = None
    task_type: str | None = None
    classified: str | None = None
    classifier_cost: float | None = None

    @property
    def untyped(self) -> bool:
        """A routing that names no task type (one the classifier may give a type)."""
        return self.spec is not None and self.spec.task_type is None

    def typed(self, task_type: str | None, how: str, cost: float | None) -> Choice:
        """This routing at ``task_type`` (None: still none), found as ``how`` says."""
        assert self.spec is not None
        spec = self.spec.model_copy(update={"task_type": task_type})
        return dataclasses.replace(
            self, spec=spec, task_type=task_type, classified=how, classifier_cost=cost
        )


def _number(headers: Mapping[str, str], name: str, low: float, high: float) -> float | None:
    """A header's number, from ``low`` to ``high`` (None when absent)."""
    raw = headers.get(name)
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise InvalidInput(name, raw, "must be a number") from None
    if not math.isfinite(value) or value < 0:
        raise InvalidInput(name, raw, "must be a finite number, 0 or more")
    if not low <= value <= high:
        raise InvalidInput(name, raw, f"must be from {low:g} to {high:g}")
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


def _floors(form: Form, headers: Mapping[str, str]) -> tuple[float | None, float | None, str]:
    """The floor headers (absolute, share) and the one sent (``""``: none), refused when
    both are sent or one is of the other kind than the model's own floor."""
    floor = _number(headers, FLOOR_HEADER, 0.0, 10.0)
    share = _number(headers, FLOOR_SHARE_HEADER, 0.0, 1.0)
    if share is not None and share <= 0:
        raise InvalidInput(FLOOR_SHARE_HEADER, headers[FLOOR_SHARE_HEADER], "must be above 0")
    if floor is not None and share is not None:
        raise InvalidInput(
            FLOOR_SHARE_HEADER, headers[FLOOR_SHARE_HEADER],
            f"send one of {FLOOR_HEADER} and {FLOOR_SHARE_HEADER}, not both",
        )  # fmt: skip
    if floor is not None and form.quality_floor_share is not None:
        raise InvalidInput(
            FLOOR_HEADER, headers[FLOOR_HEADER],
            f"the model's floor is a share ({form.quality_floor_share:g} of the reference"
            f" agent's skill), which a skill cannot be compared with before routing: send"
            f" {FLOOR_SHARE_HEADER}",
        )  # fmt: skip
    if share is not None and form.quality_floor is not None:
        raise InvalidInput(
            FLOOR_SHARE_HEADER, headers[FLOOR_SHARE_HEADER],
            f"the model's floor is a skill ({form.quality_floor:g}), which a share cannot be"
            f" compared with before routing: send {FLOOR_HEADER}",
        )  # fmt: skip
    sent = FLOOR_HEADER if floor is not None else FLOOR_SHARE_HEADER if share is not None else ""
    return floor, share, sent


def _with_headers(form: Form, headers: Mapping[str, str]) -> dict[str, object]:
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
    floor, share, sent = _floors(form, headers)
    if sent:
        if strategy is not None and strategy is not Strategy.CHEAPEST_ABOVE:
            raise InvalidInput(
                sent, headers[sent],
                f"applies to strategy cheapest_above only; the model asks for {strategy.value}",
            )  # fmt: skip
        strategy = Strategy.CHEAPEST_ABOVE
    strategy = strategy or Strategy.BEST
    confidence = _number(headers, CONFIDENCE_HEADER, 0.5, 1.0)
    if confidence is not None and (confidence >= 1 or strategy is not Strategy.CHEAPEST_ABOVE):
        why = "must be under 1" if confidence >= 1 else "applies to strategy cheapest_above only"
        raise InvalidInput(CONFIDENCE_HEADER, headers[CONFIDENCE_HEADER], why)
    return {
        "task_type": task_type,
        "tags": tuple(tags),
        "strategy": strategy,
        "quality_floor": _stricter(form.quality_floor, floor, max),
        "quality_floor_share": _stricter(form.quality_floor_share, share, max),
        "confidence": _stricter(form.confidence, confidence, max),
        "explore_share": form.explore_share,
        "max_cost_per_round": _stricter(
            form.max_cost_per_round, _number(headers, MAX_COST_HEADER, 0.0, math.inf), min
        ),
    }


def choose(
    model: object,
    headers: Mapping[str, str],
    *,
    agents: Collection[str],
    aliases: Mapping[str, GatewayModel],
    attempts: int,
    explore_share: float = 0.2,
) -> Choice:
    """What ``model`` (with ``headers``, lower-case names) asks for. ``agents``: the agent
    ids a request may name directly; ``attempts``: how many agents a routing may try;
    ``explore_share``: the share of requests that explore when the model names none
    (``routing.max_explore_share``). The routing's share is per pick, and the picks are
    the attempts (the explored one first): the share of requests is divided by them, so
    that ``explore_share`` of the requests, not of the picks, go to an explored agent."""
    if not isinstance(model, str) or not model:
        raise InvalidInput("model", model, "must be a non-empty string")
    if model in agents:
        return Choice(model=model, agent_id=model, task_type=_task_type(headers))
    if model.startswith(ROUTE_PREFIX):
        form = route_form(model)
    elif model in aliases:
        form = alias_form(aliases[model])
    elif model == ROUTE:
        form = route_form(model)
    else:
        raise UnknownModel(
            model, "names no agent, route form (route, route:<task_type>[:<strategy>]) or"
            " alias (see GET /v1/models)",
        )  # fmt: skip
    fields = _with_headers(form, headers)
    if fields["strategy"] is Strategy.CHEAPEST_ABOVE and (
        fields["quality_floor"] is None and fields["quality_floor_share"] is None
    ):
        raise InvalidInput(
            "model", model,
            "strategy cheapest_above needs a floor: in the model"
            " (route:<task_type>:cheapest_above@0.95 for a share, @7.5 for a skill), or the"
            f" header {FLOOR_HEADER} or {FLOOR_SHARE_HEADER}",
        )  # fmt: skip
    if fields["strategy"] is not Strategy.BEST:
        share = fields["explore_share"]
        asked = explore_share if share is None else float(share)  # type: ignore[arg-type]
        fields["explore_share"] = asked / attempts
    try:
        spec = RouteSpec.model_validate({**fields, "count": attempts})
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "model"
        reason = first["msg"].removeprefix("Value error, ")
        raise InvalidInput("model", model, f"{where}: {reason}") from None
    return Choice(model=model, spec=spec, task_type=spec.task_type)
