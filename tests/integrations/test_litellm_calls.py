"""What the LiteLLM callback reads of a call's kwargs: the outcome of each of LiteLLM's
exceptions, the agent of a deployment, the latency, the cost; the proxy's settings."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from litellm import exceptions

from agentladder.domain.routing import Strategy
from agentladder.integrations.litellm import LadderSettings
from agentladder.integrations.litellm.calls import (
    agent_of,
    deployment_agent,
    latency_ms,
    outcome_of,
    response_cost,
)

ARGS: dict[str, Any] = {"message": "m", "llm_provider": "openai", "model": "gpt"}


@pytest.mark.parametrize(
    ("error", "outcome"),
    [
        (exceptions.RateLimitError(**ARGS), "rate_limited"),
        (exceptions.Timeout(**ARGS), "timeout"),
        (exceptions.BadRequestError(**ARGS), "bad_request"),
        (exceptions.ContextWindowExceededError(**ARGS), "bad_request"),
        (exceptions.AuthenticationError(**ARGS), "auth_error"),
        (exceptions.ServiceUnavailableError(**ARGS), "unavailable"),
        (exceptions.InternalServerError(**ARGS), "server_error"),
        (ValueError("no status"), "error"),
    ],
)
def test_each_litellm_exception_has_its_outcome(error: Exception, outcome: str) -> None:
    assert outcome_of(error) == outcome


def test_the_agent_of_a_call() -> None:
    """Metadata ``agentladder_agent`` first, then the mapping of the deployment's id or
    model, then the deployment's id; none for a call of no deployment."""
    info = {"id": "dep-1"}
    call = {"litellm_params": {"model_info": info, "metadata": {"deployment": "openai/x"}}}
    assert agent_of(call, {}) == "dep-1"
    assert agent_of(call, {"dep-1": "alpha"}) == "alpha"
    assert agent_of(call, {"openai/x": "bravo"}) == "bravo"
    named = {"litellm_params": {"model_info": info, "metadata": {"agentladder_agent": "c"}}}
    assert agent_of(named, {"dep-1": "alpha"}) == "c"
    assert agent_of({"model": "gpt"}, {}) is None
    assert agent_of({"model": "gpt"}, {"gpt": "delta"}) == "delta"
    deployment = {"model_info": {"id": "d"}, "litellm_params": {"model": "openai/y"}}
    assert deployment_agent(deployment, {"openai/y": "echo"}) == "echo"
    assert deployment_agent({"litellm_params": {"model": "z"}}, {}) is None


def test_latency_and_cost() -> None:
    start = datetime(2026, 1, 1, 12, 0, 0)
    assert latency_ms(start, start + timedelta(milliseconds=250)) == 250.0
    assert latency_ms(10.0, 10.5) == 500.0
    assert latency_ms(None, None) == 0.0
    assert response_cost({"response_cost": 0.25}) == 0.25
    assert response_cost({"response_cost": None}) is None
    assert response_cost({"response_cost": True}) is None


def test_the_proxy_settings_come_from_the_environment() -> None:
    env = {"AGENTLADDER_URL": "http://127.0.0.1:9", "AGENTLADDER_TOKEN": "t",
           "AGENTLADDER_STRATEGY": "best"}  # fmt: skip
    found = LadderSettings.from_env(env)
    assert (found.url, found.token, found.strategy) == ("http://127.0.0.1:9", "t", Strategy.BEST)
    default = LadderSettings.from_env({})
    assert (default.token, default.strategy) == (None, Strategy.CHEAPEST_ABOVE)
