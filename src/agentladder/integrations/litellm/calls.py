"""What a LiteLLM call's logging kwargs say, as the ladder takes it: the agent, the
outcome, the latency, the cost, the caller's task type and score. Pure functions of the
kwargs LiteLLM hands its callbacks (``CustomLogger``)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

__all__ = [
    "SCORE",
    "TASK_TYPE",
    "agent_of",
    "deployment_agent",
    "latency_ms",
    "metadata_of",
    "outcome_of",
    "response_cost",
]

TASK_TYPE = "agentladder_task_type"
"""The request metadata key of the task type a call is for."""
SCORE = "agentladder_score"
"""The request metadata key of the caller's score of the answer (0-10)."""
AGENT = "agentladder_agent"
"""The request metadata key naming the agent outright."""

_BAD_REQUEST = frozenset({400, 413, 422})
_AUTH = frozenset({401, 403})


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def metadata_of(kwargs: Mapping[str, Any]) -> Mapping[str, Any]:
    """The request's metadata (``metadata``, or ``litellm_metadata`` where LiteLLM keeps
    it), as a callback's kwargs or a routing request's kwargs hold it."""
    params = _mapping(kwargs.get("litellm_params"))
    for found in (params.get("metadata"), kwargs.get("metadata"), kwargs.get("litellm_metadata")):
        if isinstance(found, Mapping) and found:
            return found
    return {}


def deployment_agent(deployment: Mapping[str, Any], agents: Mapping[str, str]) -> str | None:
    """The agent a router deployment is: ``agents`` of its ``model_info.id`` or its litellm
    ``model``, else its ``model_info.id``."""
    ident = _mapping(deployment.get("model_info")).get("id")
    model = _mapping(deployment.get("litellm_params")).get("model")
    for key in (ident, model):
        if isinstance(key, str) and key in agents:
            return agents[key]
    return ident if isinstance(ident, str) else None


def agent_of(kwargs: Mapping[str, Any], agents: Mapping[str, str]) -> str | None:
    """The agent a logged call went to: metadata ``agentladder_agent``, else its
    deployment's (``deployment_agent``), else ``agents`` of the call's model."""
    metadata = metadata_of(kwargs)
    named = metadata.get(AGENT)
    if isinstance(named, str):
        return named
    params = _mapping(kwargs.get("litellm_params"))
    info = _mapping(params.get("model_info")) or _mapping(metadata.get("model_info"))
    model = metadata.get("deployment") or kwargs.get("model")
    found = deployment_agent({"model_info": info, "litellm_params": {"model": model}}, agents)
    if found is not None:
        return found
    return agents.get(model) if isinstance(model, str) else None


def outcome_of(error: object) -> str:
    """A failure's outcome from LiteLLM's exception: its HTTP status, or its kind."""
    status = getattr(error, "status_code", None)
    name = type(error).__name__
    if status == 429 or name == "RateLimitError":
        return "rate_limited"
    if status == 408 or "Timeout" in name:
        return "timeout"
    if status in _BAD_REQUEST:
        return "bad_request"
    if status in _AUTH:
        return "auth_error"
    if status == 503:
        return "unavailable"
    if isinstance(status, int) and status >= 500:
        return "server_error"
    return "error"


def latency_ms(start: object, end: object) -> float:
    """The call's time in milliseconds (datetimes or seconds; 0 when unknown)."""
    spent = end - start if isinstance(start, datetime) and isinstance(end, datetime) else None
    if isinstance(spent, timedelta):
        return max(0.0, spent.total_seconds() * 1000)
    if isinstance(start, int | float) and isinstance(end, int | float):
        return max(0.0, (float(end) - float(start)) * 1000)
    return 0.0


def response_cost(kwargs: Mapping[str, Any]) -> float | None:
    """LiteLLM's ``response_cost`` of the call, when it computed one."""
    cost = kwargs.get("response_cost")
    if isinstance(cost, int | float) and not isinstance(cost, bool) and cost >= 0:
        return float(cost)
    return None
