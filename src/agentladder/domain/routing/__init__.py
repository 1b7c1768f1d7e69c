"""Routing: which agents should do a task, within a budget, and health cooldowns.

Pure rules, no I/O: ``route(table, spec, ...)`` chooses agents from a ``RoutingTable``
of ``Candidate`` (skill at the task type with its uncertainty, cost, latency, status,
cooldown, level, tags); ``record_call`` folds a provider call's outcome into an agent's
``Health``. See docs/routing.md.
"""

from agentladder.domain.routing.health import Cooldown, Health, cooldown_of, record_call
from agentladder.domain.routing.rules import RoutingRules
from agentladder.domain.routing.select import Candidate, RoutingTable, route, routing_table
from agentladder.domain.routing.spec import (
    ExclusionCode,
    NotChosen,
    Pick,
    RouteSpec,
    Routing,
    Strategy,
)

__all__ = [
    "Candidate",
    "Cooldown",
    "ExclusionCode",
    "Health",
    "NotChosen",
    "Pick",
    "RouteSpec",
    "Routing",
    "RoutingRules",
    "RoutingTable",
    "Strategy",
    "cooldown_of",
    "record_call",
    "route",
    "routing_table",
]
