"""``LadderRouting``: LiteLLM's custom routing strategy (``CustomRoutingStrategyBase``) that
asks the ladder's ``POST /route`` which deployment of a model group serves a request, and
falls back to LiteLLM's default choice (a random deployment of the group, as its
simple-shuffle) when the ladder is unreachable or picks no deployment of the group. The
ladder's reason rides on the returned deployment's ``model_info`` (``agentladder_route``):
LiteLLM's routing hook has no access to the response's hidden params."""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping, Sequence
from typing import Any

from litellm.types.router import CustomRoutingStrategyBase

from agentladder.client import RouteOut
from agentladder.domain.routing import Strategy
from agentladder.integrations.litellm.calls import TASK_TYPE, deployment_agent, metadata_of
from agentladder.integrations.litellm.clients import LadderClients
from agentladder.integrations.litellm.settings import LadderSettings

__all__ = ["ROUTE_INFO", "LadderRouting", "install"]

log = logging.getLogger(__name__)

ROUTE_INFO = "agentladder_route"
"""The ``model_info`` key of the ladder's reason on the deployment it picked."""

Deployment = dict[str, Any]


class LadderRouting(CustomRoutingStrategyBase):
    """The ladder's pick among ``router``'s deployments of a model group; ``asked``,
    ``picked`` and ``fallbacks`` count the picks."""

    def __init__(
        self, router: Any, settings: LadderSettings | None = None, rng: random.Random | None = None
    ) -> None:
        self.router = router
        self.settings = settings or LadderSettings()
        self.rng = rng or random.Random()
        self.asked = 0
        self.picked = 0
        self.fallbacks = 0
        self.clients = LadderClients(self.settings)

    def deployments(self, model: str) -> list[Deployment]:
        """The router's deployments of the model group ``model``."""
        registry = getattr(self.router, "registry", None)
        found = registry().deployments(model) if registry else self.router.get_model_list(model)
        return [dict(d) for d in found or []]

    def _request(self, model: str, request_kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
        s = self.settings
        task_type = metadata_of(request_kwargs or {}).get(TASK_TYPE)
        body: dict[str, Any] = {"count": 1, "strategy": s.strategy.value}
        if isinstance(task_type, str):
            body["task_type"] = task_type
        if s.strategy is Strategy.CHEAPEST_ABOVE and s.quality_floor is not None:
            body["quality_floor"] = s.quality_floor
        elif s.strategy is Strategy.CHEAPEST_ABOVE and s.quality_floor_share is not None:
            body["quality_floor_share"] = s.quality_floor_share
        if model in s.tags:
            body["tags"] = list(s.tags[model])
        return body

    def _choose(self, group: Sequence[Deployment], route: RouteOut | None) -> Deployment:
        """The deployment of the ladder's pick, or the default's (a random one)."""
        if route is not None and route.agents:
            pick = route.agents[0]
            for deployment in group:
                if deployment_agent(deployment, self.settings.agents) == pick.agent_id:
                    self.picked += 1
                    info = {**deployment.get("model_info", {}), ROUTE_INFO: pick.reason}
                    log.debug("agentladder picked %s: %s", pick.agent_id, pick.reason)
                    return {**deployment, "model_info": info}
            log.info("agentladder picked %s, no deployment of the group", pick.agent_id)
        self.fallbacks += 1
        return self.rng.choice(list(group))

    def _asked_for(self, model: str) -> list[Deployment]:
        """The deployments of ``model``'s group, the request counted; none is a ValueError."""
        group = self.deployments(model)
        if not group:
            raise ValueError(f"model: no deployment of the model group {model!r}")
        self.asked += 1
        return group

    async def async_get_available_deployment(  # type: ignore[override]  # base: None
        self, model: str, messages: list[dict[str, str]] | None = None,
        input: str | list[object] | None = None, specific_deployment: bool | None = False,
        request_kwargs: dict[str, object] | None = None,
    ) -> Deployment:  # fmt: skip
        """The deployment serving an async request to ``model``."""
        group = self._asked_for(model)
        route = None
        try:
            route = await self.clients.running().route(self._request(model, request_kwargs))
        except Exception as error:  # the ladder unreachable or refusing: LiteLLM's choice
            log.warning("agentladder: routing %s fell back: %s", model, error)
        return self._choose(group, route)

    def get_available_deployment(  # type: ignore[override]  # LiteLLM's base: None
        self, model: str, messages: list[dict[str, str]] | None = None,
        input: str | list[object] | None = None, specific_deployment: bool | None = False,
        request_kwargs: dict[str, object] | None = None,
    ) -> Deployment:  # fmt: skip
        """The deployment serving a sync request to ``model``."""
        group = self._asked_for(model)
        route = None
        try:
            route = self.clients.sync().route(self._request(model, request_kwargs))
        except Exception as error:
            log.warning("agentladder: routing %s fell back: %s", model, error)
        return self._choose(group, route)


def install(router: Any, settings: LadderSettings | None = None) -> LadderRouting:
    """``router`` routes by the ladder from now on (LiteLLM's ``register_plugin``, or
    ``set_custom_routing_strategy`` where that is its name)."""
    strategy = LadderRouting(router, settings)
    register = getattr(router, "register_plugin", None) or router.set_custom_routing_strategy
    register(strategy)
    return strategy
