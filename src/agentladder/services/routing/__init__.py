"""Routing: the agents most likely to do a task well (``RoutingService``), and each agent's
health from its provider calls: ok, degraded or down (``HealthMonitor``)."""

from agentladder.services.routing.health import HealthMonitor
from agentladder.services.routing.service import RoutingService

__all__ = ["HealthMonitor", "RoutingService"]
