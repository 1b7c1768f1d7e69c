"""The headers that tell a caller how its request was routed (docs/gateway.md,
"Forwarding"), on its answer and on an error that came after the choice:

- ``x-agentladder-task-type``: the task type used (absent: none, the overall skill);
- ``x-agentladder-classified``: how a request that named none got it (``rule``,
  ``agent``, ``default``; ``failed``: none found), and ``x-agentladder-classifier-cost``
  (dollars) when the classifier agent was asked;
- ``x-agentladder-strategy``: the routing's strategy (a routed request only);
- for cheapest_above, ``x-agentladder-quality-floor`` (the floor applied, on the 0-10
  scale), ``x-agentladder-quality-floor-share`` (the share it was computed from, when the
  floor was relative) and ``x-agentladder-confidence``;
- ``x-agentladder-warning``: the routing's warnings, ``; `` between them (no agent has
  evidence at the task type: routed on predicted skill, with the closest known task
  types: ``did you mean code_review?``).

Pure: no I/O.
"""

from __future__ import annotations

from agentladder.domain.routing.spec import Routing
from agentladder.services.gateway.choice import (
    CONFIDENCE_HEADER,
    FLOOR_HEADER,
    FLOOR_SHARE_HEADER,
    TASK_TYPE_HEADER,
    Choice,
)

__all__ = [
    "CLASSIFIED_HEADER",
    "CLASSIFIER_COST_HEADER",
    "STRATEGY_HEADER",
    "WARNING_HEADER",
    "said",
]

STRATEGY_HEADER = "x-agentladder-strategy"
CLASSIFIED_HEADER = "x-agentladder-classified"
CLASSIFIER_COST_HEADER = "x-agentladder-classifier-cost"
WARNING_HEADER = "x-agentladder-warning"


def said(choice: Choice, routing: Routing | None = None) -> dict[str, str]:
    """The headers of ``choice`` (its task type, how it was classified) and, once routed,
    of ``routing`` (its strategy and floor)."""
    found: dict[str, str] = {}
    if choice.task_type is not None:
        found[TASK_TYPE_HEADER] = choice.task_type
    if choice.classified is not None:
        found[CLASSIFIED_HEADER] = choice.classified
    if choice.classifier_cost is not None:
        found[CLASSIFIER_COST_HEADER] = f"{choice.classifier_cost:.6f}"
    if routing is not None:
        found[STRATEGY_HEADER] = routing.strategy.value
        if routing.quality_floor is not None:
            found[FLOOR_HEADER] = f"{routing.quality_floor:g}"
        if routing.quality_floor_share is not None:
            found[FLOOR_SHARE_HEADER] = f"{routing.quality_floor_share:g}"
        if routing.confidence is not None:
            found[CONFIDENCE_HEADER] = f"{routing.confidence:g}"
        if routing.warnings:
            found[WARNING_HEADER] = "; ".join(routing.warnings)
    return found
