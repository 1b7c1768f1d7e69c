"""The gateway's counters for ``/metrics`` (its provider calls are in the provider call
metrics, call ``chat``; the classifier's, call ``classify``): requests, failed attempts,
fallbacks, its added latency, checks and judges' spend, classifications and the
classifier's spend (this instance's, since it started), and the clients' spend and budgets
(the store's, shared by every instance)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)

from agentladder.services.container import Services
from agentladder.services.gateway.budgets import ClientSpend

__all__ = ["budget_used", "gateway_metrics"]


def gateway_metrics(services: Services) -> Iterator[Metric]:
    """Requests by agent, task type and outcome; failed attempts (each passed on to the
    next agent, or the last); requests no agent answered; checks by outcome; the judges'
    spend."""
    totals = services.gateway.totals
    requests = CounterMetricFamily(
        "agentladder_gateway_requests",
        "gateway requests by the agent that took them, task type (a request that named none:"
        " the one its check and feedback are recorded at, general by default) and outcome"
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
    yield from _seen(services)
    yield from _classified(services)
    yield from _spend(services)


def _seen(services: Services) -> Iterator[Metric]:
    gateway = services.gateway
    added = HistogramMetricFamily(
        "agentladder_gateway_added_latency_seconds",
        "the gateway's own time per answered request (until the answer or a stream's first"
        " bytes is handed over, less the providers' time), by agent and task type",
        labels=["agent", "task_type"],
    )
    for (agent, task_type), histogram in sorted(gateway.traffic.added.items()):
        added.add_metric([agent, task_type], histogram.cumulative(), histogram.total_s)
    yield added
    fallbacks = CounterMetricFamily(
        "agentladder_gateway_fallbacks",
        "gateway requests answered by an agent after another failed on them, by the agent"
        " that answered and task type",
        labels=["agent", "task_type"],
    )
    for (agent, task_type), count in sorted(gateway.traffic.fallbacks.items()):
        fallbacks.add_metric([agent, task_type], count)
    yield fallbacks
    checks = CounterMetricFamily(
        "agentladder_gateway_checks",
        "gateway checks by the agent checked, task type and outcome (started; passed or"
        " failed: the judge's score against the pass score; retried: an attempt failed;"
        " error: given up after its attempts; recovered: taken over from the store;"
        " deferred: left in the store at a stop; backlogged: stored only, the queue full;"
        " dropped: decided, not promised (nowhere to keep it);"
        " own_agent: the judge's agent answered)",
        labels=["agent", "task_type", "outcome"],
    )
    for (agent, task_type, outcome), count in sorted(gateway.totals.checks.items()):
        checks.add_metric([agent, task_type, outcome], count)
    yield checks
    judges = CounterMetricFamily(
        "agentladder_gateway_judge_cost_dollars",
        "what the gateway's judge calls cost at the judge's prices, by judge name",
        labels=["judge"],
    )
    for judge, cost in sorted(gateway.totals.judge_cost_usd.items()):
        judges.add_metric([judge], cost)
    yield judges


def _classified(services: Services) -> Iterator[Metric]:
    totals = services.gateway.totals
    classified = CounterMetricFamily(
        "agentladder_gateway_classifications",
        "routed gateway requests that named no task type, by the task type they were given"
        " ('' when none) and how (rule; agent: the classifier agent named it; default;"
        " failed: none found, routed at the overall skill)",
        labels=["task_type", "outcome"],
    )
    for (task_type, outcome), count in sorted(totals.classifications.items()):
        classified.add_metric([task_type, outcome], count)
    yield classified
    cost = CounterMetricFamily(
        "agentladder_gateway_classifier_cost_dollars",
        "what the classifier agent's calls cost at its prices, by agent",
        labels=["agent"],
    )
    for agent, spent in sorted(totals.classifier_cost_usd.items()):
        cost.add_metric([agent], spent)
    yield cost


def _spend(services: Services) -> Iterator[Metric]:
    spend = GaugeMetricFamily(
        "agentladder_gateway_client_spend_dollars",
        "what each named client token spent in the current UTC day and month and in total,"
        " at the agents' prices (the store's figure, shared by the instances, plus this"
        " instance's charges not written yet)",
        labels=["client", "period"],
    )
    budgets = GaugeMetricFamily(
        "agentladder_gateway_client_budget_dollars",
        "each client token's budget, by client and its period (day, month, total)",
        labels=["client", "period"],
    )
    used = GaugeMetricFamily(
        "agentladder_gateway_client_budget_used_ratio",
        "each client token's spend in its budget's period over its budget (1: spent, its"
        " requests are answered 429 insufficient_quota), by client and that period",
        labels=["client", "period"],
    )
    for row in services.gateway.budgets.spend():
        for period, spent in row.spent_usd.items():
            spend.add_metric([row.client, period], spent)
        if row.budget is not None:
            budget = row.budget
            budgets.add_metric([row.client, budget.period], budget.limit_usd)
            used.add_metric([row.client, budget.period], budget_used(row))
    yield spend
    yield budgets
    yield used


def budget_used(row: ClientSpend) -> float:
    """The share of its budget a client spent in the budget's period (0 without one; a
    budget's limit is above 0)."""
    budget = row.budget
    if budget is None:
        return 0.0
    return row.spent_usd[budget.period] / budget.limit_usd
