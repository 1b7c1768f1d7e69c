"""Routing: which agents should do a task, within a budget, and agent health.

Pure rules, no I/O: ``route(table, spec, ...)`` chooses agents from a ``RoutingTable``
of ``Candidate`` (skill at the task type with its uncertainty, cost, latency, status,
health, level, tags); ``record_call`` folds a provider call's outcome into an agent's
``Health``, ``health_of`` says whether it is ok, degraded or down. See docs/routing.md.
"""

from agentladder.domain.routing.health import (
    AgentHealth,
    Cooldown,
    Health,
    HealthStatus,
    call_share,
    cooldown_of,
    health_of,
    record_call,
)
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
    "AgentHealth",
    "Candidate",
    "Cooldown",
    "ExclusionCode",
    "Health",
    "HealthStatus",
    "NotChosen",
    "Pick",
    "RouteSpec",
    "Routing",
    "RoutingRules",
    "RoutingTable",
    "Strategy",
    "call_share",
    "cooldown_of",
    "health_of",
    "record_call",
    "route",
    "routing_table",
]
