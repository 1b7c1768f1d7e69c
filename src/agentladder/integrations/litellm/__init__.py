"""LiteLLM speaks to the ladder (``pip install 'agentladder[litellm]'``, docs/integrations.md):
``LadderLogger`` reports each call's outcome (health, stats, judgments), ``LadderRouting``
lets the ladder pick a model group's deployment; ``proxy_handler_instance`` is the
callback LiteLLM's proxy names in its config, set from ``AGENTLADDER_URL`` and
``AGENTLADDER_TOKEN``."""

from agentladder.integrations.litellm.logger import LadderLogger
from agentladder.integrations.litellm.routing import ROUTE_INFO, LadderRouting, install
from agentladder.integrations.litellm.settings import LadderSettings

__all__ = [
    "ROUTE_INFO",
    "LadderLogger",
    "LadderRouting",
    "LadderSettings",
    "install",
    "proxy_handler_instance",
]

proxy_handler_instance = LadderLogger(LadderSettings.from_env())
"""The proxy's callback: ``litellm_settings: callbacks:
agentladder.integrations.litellm.proxy_handler_instance``."""
