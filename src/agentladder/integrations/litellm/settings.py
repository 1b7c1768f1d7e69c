"""``LadderSettings``: where the ladder is, and how LiteLLM's deployments and requests map
to its agents and routing, shared by the callback and the routing strategy."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from agentladder.domain.routing import Strategy

__all__ = ["LadderSettings"]


@dataclass(frozen=True)
class LadderSettings:
    """``url`` and ``token`` (role orchestrator) of the ladder; ``agents``: a deployment's
    ``model_info.id`` or its litellm ``model`` (``openai/gpt-4o``) to the agent id it is
    (absent: the ``model_info.id`` itself); ``strategy``, ``quality_floor`` and
    ``quality_floor_share``: how ``POST /route`` picks (by default the cheapest agent
    whose skill is at least 0.9 of the best's; give one of the two floors); ``tags``: a
    model group to the capability tags its agents declare (routing picks among them);
    ``timeout_s``: each request to the ladder (a slow ladder must not hold a call)."""

    url: str = "http://127.0.0.1:8000"
    token: str | None = None
    agents: Mapping[str, str] = field(default_factory=dict)
    strategy: Strategy = Strategy.CHEAPEST_ABOVE
    quality_floor: float | None = None
    quality_floor_share: float | None = 0.9
    tags: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    timeout_s: float = 5.0

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> LadderSettings:
        """From ``AGENTLADDER_URL``, ``AGENTLADDER_TOKEN`` and ``AGENTLADDER_STRATEGY``
        (the proxy's callback is built at import, before any code of the caller runs)."""
        found = os.environ if env is None else env
        strategy = found.get("AGENTLADDER_STRATEGY", Strategy.CHEAPEST_ABOVE.value)
        return cls(
            url=found.get("AGENTLADDER_URL", cls.url),
            token=found.get("AGENTLADDER_TOKEN") or None,
            strategy=Strategy(strategy),
        )
