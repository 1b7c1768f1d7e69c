"""Routing: the agents most likely to do a task well (``RoutingService``), and the health
cooldowns of agents whose provider calls keep failing (``HealthMonitor``)."""

from agentladder.services.routing.health import HealthMonitor
from agentladder.services.routing.service import RoutingService

__all__ = ["HealthMonitor", "RoutingService"]
