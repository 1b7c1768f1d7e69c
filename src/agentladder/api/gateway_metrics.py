"""The gateway's counters for ``/metrics`` (its provider calls are in the provider call
metrics, call ``chat``)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, Metric

from agentladder.services.container import Services

__all__ = ["gateway_metrics"]


def gateway_metrics(services: Services) -> Iterator[Metric]:
    """Requests by agent, task type and outcome; failed attempts (each passed on to the
    next agent, or the last); requests no agent answered; checks by outcome; the judges'
    spend."""
    totals = services.gateway.totals
    requests = CounterMetricFamily(
        "agentladder_gateway_requests",
        "gateway requests by the agent that took them, task type ('' when none) and outcome"
        " (answered; broken: a stream that failed midway; cancelled: the caller went away)",
        labels=["agent", "task_type", "outcome"],
    )
    for (agent, task_type, outcome), count in sorted(totals.requests.items()):
        requests.add_metric([agent, task_type, outcome], count)
    yield requests
    failed = CounterMetricFamily(
        "agentladder_gateway_failed_attempts",
        "gateway attempts that failed before any byte went to the caller, by agent (the"
        " request went on to the next agent, or failed when none was left)",
        labels=["agent"],
    )
    for agent, count in sorted(totals.failed_attempts.items()):
        failed.add_metric([agent], count)
    yield failed
    unavailable = CounterMetricFamily(
        "agentladder_gateway_unavailable",
        "gateway requests every agent tried failed (503 agents_failed), by task type",
        labels=["task_type"],
    )
    for task_type, count in sorted(totals.unavailable.items()):
        unavailable.add_metric([task_type], count)
    yield unavailable
    checks = CounterMetricFamily(
        "agentladder_gateway_checks",
        "gateway checks by the agent checked, task type and outcome (started; passed or"
        " failed: the judge's score against the pass score; error: the judge or the Oracle"
        " failed; dropped: decided but never run; own_agent: the judge's agent answered)",
        labels=["agent", "task_type", "outcome"],
    )
    for (agent, task_type, outcome), count in sorted(totals.checks.items()):
        checks.add_metric([agent, task_type, outcome], count)
    yield checks
    spend = CounterMetricFamily(
        "agentladder_gateway_judge_cost_dollars",
        "what the gateway's judge calls cost at the judge's prices, by judge name",
        labels=["judge"],
    )
    for judge, dollars in sorted(totals.judge_cost_usd.items()):
        spend.add_metric([judge], dollars)
    yield spend
