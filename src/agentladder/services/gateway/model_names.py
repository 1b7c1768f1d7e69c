"""The routing a gateway request's ``model`` names, before its headers add to it: a route
form, or an alias of ``gateway.models`` (docs/gateway.md, "Choosing the agent: model").

Route forms:

- ``route``: best, no task type (``gateway.classify`` gives it one, if configured);
- ``route:<task_type>``: best at the task type;
- ``route:<task_type>:<strategy>``: ``best``, ``explore`` or ``cheapest_above``;
- ``route:<task_type>:cheapest_above@<floor>``, and ``...@<floor>:<confidence>``;
- ``route::<strategy>...``: any of the two above with no task type.

``<floor>`` is a number: from above 0 up to 1 a share of the reference agent's skill
(``@0.95``: 95% of the best available agent's skill, routing's ``quality_floor_share``),
above 1 up to 10 an absolute skill (``@7.5``, ``quality_floor``); or a percentage, always
a share (``@95%``). An absolute floor of 1 or less cannot be named so (the header
``x-agentladder-quality-floor`` or an alias can). ``<confidence>``, from 0.5 to under 1,
is the least probability an agent's skill clears the floor with (``routing.confidence``
when not named). A confidence without a floor is ``InvalidInput`` (400: the floor is
missing, and how to give it); anything else is ``UnknownModel`` naming the model and what
is wrong.

Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentladder.domain.judgment import TASK_TYPE_PATTERN
from agentladder.domain.routing.spec import Strategy
from agentladder.errors import InvalidInput, UnknownModel
from agentladder.services.gateway.settings import GatewayModel

__all__ = ["ROUTE", "ROUTE_PREFIX", "Form", "alias_form", "route_form"]

ROUTE = "route"
ROUTE_PREFIX = "route:"
_TASK_TYPE = re.compile(TASK_TYPE_PATTERN)
_NUMBER = re.compile(r"^(\d{1,3}(?:\.\d{1,6})?|\.\d{1,6})(%?)$")
_STRATEGIES = ", ".join(s.value for s in Strategy)
_GRAMMAR = (
    "use route, route:<task_type>, route:<task_type>:<strategy> or"
    " route:<task_type>:cheapest_above@<floor>[:<confidence>] (the task type may be left"
    " empty: route::<strategy>)"
)


@dataclass(frozen=True, slots=True)
class Form:
    """What a model name asks of routing before the headers (``strategy`` None: not named,
    best unless a floor header makes it cheapest_above)."""

    task_type: str | None = None
    strategy: Strategy | None = None
    quality_floor: float | None = None
    quality_floor_share: float | None = None
    confidence: float | None = None
    explore_share: float | None = None
    tags: tuple[str, ...] = ()
    max_cost_per_round: float | None = None


def alias_form(alias: GatewayModel) -> Form:
    """An alias's routing (its ``strategy`` named only when its configuration sets it)."""
    named = "strategy" in alias.model_fields_set
    return Form(
        task_type=alias.task_type, strategy=alias.strategy if named else None,
        quality_floor=alias.quality_floor, quality_floor_share=alias.quality_floor_share,
        confidence=alias.confidence, explore_share=alias.explore_share, tags=alias.tags,
        max_cost_per_round=alias.max_cost_per_round,
    )  # fmt: skip


def _floor(model: str, raw: str) -> tuple[float | None, float | None]:
    """``@<floor>``'s absolute floor and share (one of them)."""
    found = _NUMBER.fullmatch(raw)
    if found is None:
        raise UnknownModel(
            model, f"floor {raw!r} must be a number: a share up to 1 (0.95), a skill above 1"
            " up to 10 (7.5), or a percentage (95%)",
        )  # fmt: skip
    value, percent = float(found.group(1)), found.group(2) == "%"
    if percent:
        value /= 100
    if value <= 0 or value > 10 or (percent and value > 1):
        raise UnknownModel(
            model, f"floor {raw!r} must be above 0 and at most 1 (a share), 10 (a skill) or"
            " 100% (a share)",
        )  # fmt: skip
    return (None, value) if value <= 1 else (value, None)


def _confidence(model: str, raw: str) -> float:
    found = _NUMBER.fullmatch(raw)
    value = float(found.group(1)) if found is not None and not found.group(2) else -1.0
    if not 0.5 <= value < 1:
        raise UnknownModel(model, f"confidence {raw!r} must be a number from 0.5 to under 1")
    return value


def route_form(model: str) -> Form:
    """``route``, ``route:<task_type>[:<strategy>[@<floor>[:<confidence>]]]`` as the
    routing it asks for (the module says each form); ``UnknownModel`` otherwise."""
    if model == ROUTE:
        return Form()
    parts = model[len(ROUTE_PREFIX) :].split(":")
    if not model.startswith(ROUTE_PREFIX) or len(parts) > 3 or parts == [""]:
        raise UnknownModel(model, _GRAMMAR)
    task_type = parts[0] or None
    if task_type is not None and not _TASK_TYPE.fullmatch(task_type):
        raise UnknownModel(model, f"task type {task_type!r} must match {TASK_TYPE_PATTERN}")
    if len(parts) == 1:
        return Form(task_type=task_type)
    name, at, floor = parts[1].partition("@")
    if name not in {s.value for s in Strategy}:
        raise UnknownModel(model, f"unknown strategy {name!r}: use {_STRATEGIES}")
    strategy = Strategy(name)
    if (at or len(parts) == 3) and strategy is not Strategy.CHEAPEST_ABOVE:
        raise UnknownModel(model, f"a floor applies to cheapest_above only, not {name}")
    if len(parts) == 3 and not at:
        raise InvalidInput(
            "model", model, "a confidence follows a floor, which is missing:"
            " route:<task_type>:cheapest_above@0.95:<confidence> (a share) or @7.5:<confidence>"
            " (a skill); or send the floor in the header x-agentladder-quality-floor-share or"
            " x-agentladder-quality-floor, and the confidence in x-agentladder-confidence",
        )  # fmt: skip
    absolute, share = _floor(model, floor) if at else (None, None)
    confidence = _confidence(model, parts[2]) if len(parts) == 3 else None
    return Form(
        task_type=task_type, strategy=strategy, quality_floor=absolute,
        quality_floor_share=share, confidence=confidence,
    )  # fmt: skip
