"""What ``/metrics`` shows of the gateway beyond its requests: its added latency,
fallbacks, the checks' counters and judges' spend, the clients' spend and budgets."""

from __future__ import annotations

import time

import httpx
import openai

from tests.gateway.conftest import CLIENT
from tests.gateway.test_gateway_served import ASK, metric
from tests.served import Server


def test_metrics_show_added_latency_fallbacks_and_client_spend(gateway: Server) -> None:
    """A routed request answered by alpha after beta and gamma failed is one fallback and
    one added-latency sample (the request's time less the providers' time, which holds
    gamma's 0.5 s timeout: at most the time the client waited less 0.5 s); team-a's
    spend today is that answer's cost once read back from the store, its budget $5 a
    day; the checks' and judges' families are there (empty until a check runs)."""
    with openai.OpenAI(base_url=gateway.url("/v1"), api_key=CLIENT, max_retries=0) as client:
        began = time.monotonic()
        answer = client.chat.completions.create(model="route:audit", messages=ASK)
        waited = time.monotonic() - began  # around the gateway's time: a bound, not a budget
    assert answer.choices[0].message.content == "answer from alpha"
    labels = '{agent="alpha",task_type="audit"}'
    assert metric(gateway, f"agentladder_gateway_fallbacks_total{labels}") == 1
    assert metric(gateway, f"agentladder_gateway_added_latency_seconds_count{labels}") == 1
    added = metric(gateway, f"agentladder_gateway_added_latency_seconds_sum{labels}")
    assert 0 < added <= waited - 0.5  # gamma's 0.5 s timeout is the provider's time, not the
    # gateway's: however slow the machine, it is in what the client waited and not in this
    spend = 'agentladder_gateway_client_spend_dollars{client="team-a",period="%s"}'
    for _ in range(50):  # team-a has a budget: its spend is written at once, read each second
        if metric(gateway, spend % "total") == 0.000025:
            break
        time.sleep(0.1)
    for period in ("day", "month", "total"):
        assert metric(gateway, spend % period) == 0.000025
    budget = 'agentladder_gateway_client_budget_dollars{client="team-a",period="day"}'
    assert metric(gateway, budget) == 5.0
    text = httpx.get(gateway.url("/metrics"), timeout=10).text
    assert "# TYPE agentladder_gateway_checks_total counter" in text
    assert "# TYPE agentladder_gateway_judge_cost_dollars_total counter" in text
