"""``GET /metrics``: Prometheus text: requests, latencies, deliberations, awards, agents,
refusals, provider calls, compare-and-set conflicts, side effects retried and in flight,
the garbage collector's collections by generation and the frozen start-up heap.

Each app has its own registry (no process-global state, so several apps and tests can
live in one process). Running totals are counters (``_total``): the totals the services
keep (deliberations finished, awards, refusals, provider calls) are read at each scrape
by a collector of this module, never set as gauges. Gauges are what is true now (agents
online and registered, deliberations in progress, tasks queued). A request is labelled by
its route's template (``/agents/{agent_id}``), a static file by its mount
(``/static/{path}``), a path nothing serves by ``unmatched``: the labels stay few.

Who may read it: anyone, unless a ``metrics`` token is configured (``api.tokens``); then
a bearer token of the ``metrics`` or ``admin`` role (401 without one, 403 for another
role), since it names the gateway's clients with their budgets and spend.
"""

from __future__ import annotations

import gc
import time
from collections import Counter as Tally
from collections.abc import Callable, Iterator
from typing import Any

from fastapi import APIRouter, FastAPI, Request, Response
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.gc_collector import GCCollector
from prometheus_client.registry import Collector
from starlette.routing import Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentladder.api.auth import TokenBook
from agentladder.api.deps import ServicesDep, caller_of_request
from agentladder.api.errors import refusals_of
from agentladder.api.gateway_metrics import gateway_metrics
from agentladder.errors import StoreUnavailable
from agentladder.services.container import Services
from agentladder.services.oracle.probation import probation_census
from agentladder.store.retry import WriteTally

__all__ = ["install_metrics", "router"]

router = APIRouter(tags=["health"])


class Metrics:
    """The app's metric families."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        labels = ("method", "route", "status")
        self.requests = Counter(
            "agentladder_http_requests", "HTTP requests", labels, registry=self.registry
        )
        self.latency = Histogram(
            "agentladder_http_request_duration_seconds", "HTTP request latency",
            ("method", "route"), registry=self.registry,
        )  # fmt: skip
        self.in_progress = Gauge(
            "agentladder_deliberations_in_progress",
            "deliberations on this instance now: running, or waiting for a slot",
            ("state",), registry=self.registry,
        )  # fmt: skip
        self.online = Gauge("agentladder_agents_online", "agents online", registry=self.registry)
        self.registered = Gauge(
            "agentladder_agents_registered", "agents registered", registry=self.registry
        )
        self.tasks_queued = Gauge(
            "agentladder_agent_tasks_queued",
            "tasks queued for agents that poll over HTTP, not yet taken", registry=self.registry,
        )  # fmt: skip
        self.cooling = Gauge(
            "agentladder_agents_cooling_down",
            "agents down now for a time (their provider calls kept failing, or it asked to"
            " wait): routing skips them", registry=self.registry,
        )  # fmt: skip
        self.unhealthy = Gauge(
            "agentladder_agents_health",
            "agents degraded or down now, by status, as this instance's calls show",
            ("status",), registry=self.registry,
        )  # fmt: skip
        self.on_probation = Gauge(
            "agentladder_agents_on_probation",
            "agents on probation now (in any task type or overall), by cause: probation,"
            " model_change", ("reason",), registry=self.registry,
        )  # fmt: skip
        self.skill_lag = Gauge(
            "agentladder_skill_lag_seconds",
            "age of the oldest skill evidence queued and not applied yet (0 when none, or"
            " without a skill queue)", registry=self.registry,
        )  # fmt: skip
        self.skill_queue_depth = Gauge(
            "agentladder_skill_queue_depth",
            "skill evidence queued and not applied yet, fleet-wide (0 without a skill queue)",
            registry=self.registry,
        )  # fmt: skip
        self.totals = Totals()
        self.registry.register(self.totals)
        GCCollector(registry=self.registry)  # python_gc_collections_total{generation}
        Gauge(
            "agentladder_gc_frozen_objects",
            "objects in the collector's permanent generation: serve freezes its start-up"
            " heap (api/heap.py), which full collections then do not walk",
            registry=self.registry,
        ).set_function(gc.get_freeze_count)


class Totals(Collector):
    """The services' running totals as counters, read at each scrape (``bind`` first)."""

    def __init__(self) -> None:
        self.source: Callable[[], tuple[Services, Any]] | None = None

    def bind(self, services: Services, app: Any) -> None:
        """Read from ``services`` and the refusals counted by ``app`` from now on."""
        self.source = lambda: (services, app)

    def collect(self) -> Iterator[Metric]:
        """Deliberations, awards, refusals, and every provider call's figures."""
        if self.source is None:
            return
        services, app = self.source()
        yield _counter(
            "agentladder_deliberations", "deliberations finished by this instance, by status",
            "status", services.orchestrator.finished.items(),
        )  # fmt: skip
        yield _counter(
            "agentladder_awards", "Oracle awards applied by this instance", "kind",
            services.oracle.awards.items(),
        )  # fmt: skip
        started = CounterMetricFamily(
            "agentladder_cooldowns_started",
            "down periods started by this instance (an agent's breaker opened)",
        )
        started.add_metric([], services.health.started)
        yield started
        refusals = services.registry.refusals + refusals_of(app)
        yield _counter(
            "agentladder_refusals",
            "refused attempts by reason: unauthenticated, invalid_token, forbidden_role"
            " (the API), self_promotion, impersonation, declaration_mismatch (the registry)",
            "reason", refusals.items(),
        )  # fmt: skip
        yield from _sentinel(services)
        yield from _provider_calls(services)
        yield from gateway_metrics(services)
        yield from _writes(services)
        yield from _skill_queue(services)


def _skill_queue(services: Services) -> Iterator[Metric]:
    """The skill evidence this instance's appliers applied, and the judgments refused
    because the skill queue was full (both 0 without a queue)."""
    applied = CounterMetricFamily(
        "agentladder_skill_applied",
        "queued skill evidence applied by this instance's appliers (its rate: applied per second)",
    )
    applied.add_metric([], 0 if services.applier is None else services.applier.applied)
    yield applied
    refused = CounterMetricFamily(
        "agentladder_skill_queue_refusals",
        "judgments this instance refused (503 with Retry-After) because the skill queue was full",
    )
    queue = services.skill.queue
    refused.add_metric([], 0 if queue is None else queue.refused)
    yield refused
    held = GaugeMetricFamily(
        "agentladder_skill_shards_held",
        "skill queue shards whose lease this instance holds now (it applies their evidence)",
    )
    held.add_metric([], 0 if services.applier is None else len(services.applier.held))
    yield held


def _counter(name: str, what: str, label: str, values: Any) -> CounterMetricFamily:
    family = CounterMetricFamily(name, what, labels=[label])
    for key, value in sorted(values):
        family.add_metric([key], value)
    return family


def _sentinel(services: Services) -> Iterator[Metric]:
    validations = CounterMetricFamily(
        "agentladder_validations",
        "verdicts recorded by this instance, by the rate reason in force when each came"
        " (level, audit, probation, model_change) and outcome (passed, failed)",
        labels=["reason", "outcome"],
    )
    for (reason, outcome), count in sorted(services.sentinel.verdicts.items()):
        validations.add_metric([reason, outcome], count)
    yield validations
    checks = CounterMetricFamily(
        "agentladder_sentinel_checks",
        "should-validate decisions of this instance, by reason (requested, probation,"
        " model_change, sampled, skipped_by_level) and whether to validate",
        labels=["reason", "validate"],
    )
    for (reason, validate), count in sorted(services.sentinel.decisions.items()):
        checks.add_metric([reason, str(validate).lower()], count)
    yield checks


def _provider_calls(services: Services) -> Iterator[Metric]:
    calls = services.orchestrator.calls
    latency = HistogramMetricFamily(
        "agentladder_provider_call_duration_seconds",
        "latency of each call to an agent's provider (every attempt), by agent and call",
        labels=["agent", "call"],
    )
    for (agent, call), histogram in sorted(calls.latency.items()):
        latency.add_metric([agent, call], histogram.cumulative(), histogram.total_s)
    yield latency
    errors = CounterMetricFamily(
        "agentladder_provider_call_errors",
        "failed calls to an agent's provider by agent, call and kind (timeout, http,"
        " refused, unparseable, invalid, rejected, limit, other)",
        labels=["agent", "call", "kind"],
    )
    for (agent, call, kind), count in sorted(calls.errors.items()):
        errors.add_metric([agent, call, kind], count)
    yield errors
    tokens = CounterMetricFamily(
        "agentladder_provider_tokens", "tokens of the calls that answered, by agent and"
        " direction (input, output)", labels=["agent", "direction"],
    )  # fmt: skip
    for (agent, direction), count in sorted(calls.tokens.items()):
        tokens.add_metric([agent, direction], count)
    yield tokens
    cost = CounterMetricFamily(
        "agentladder_provider_cost_dollars",
        "cost of the calls that answered, at each agent's prices (docs/costs.md)",
        labels=["agent"],
    )
    for agent, dollars in sorted(calls.cost.items()):
        cost.add_metric([agent], dollars)
    yield cost


def _writes(services: Services) -> Iterator[Metric]:
    """Compare-and-set attempts and conflicts (the NATS store's and the side effects'),
    side effects retried, and the side effects in flight now with the oldest one's age."""
    tallies = [services.orchestrator.writes]
    store_tally = getattr(services.store, "conflicts", None)  # the NATS store keeps one
    if isinstance(store_tally, WriteTally):
        tallies.append(store_tally)
    for name, what, part in (
        ("attempts", "compare-and-set attempts by operation (oracle, skill, skill_fit: the"
         " NATS store's; stats: a deliberation's ranking)", "attempts"),
        ("conflicts", "compare-and-set attempts refused because another writer got there"
         " first, by operation; each is retried", "conflicts"),
        ("exhausted", "operations that gave up after their last conflicting attempt",
         "exhausted"),
    ):  # fmt: skip
        family = CounterMetricFamily(f"agentladder_store_cas_{name}", what, labels=["op"])
        totals: Tally[str] = sum((getattr(t, part) for t in tallies), Tally())
        for op, count in sorted(totals.items()):
            family.add_metric([op], count)
        yield family
    yield _counter(
        "agentladder_side_effect_retries",
        "failed attempts of a deliberation's side effects, each retried with back-off, by"
        " kind (ranking, judgments, skill, calls, save)", "kind",
        services.orchestrator.writes.retried.items(),
    )  # fmt: skip
    pending, oldest_s = services.orchestrator.settling
    queue = GaugeMetricFamily(
        "agentladder_side_effects_pending",
        "deliberations whose side effects this instance is applying now",
    )
    queue.add_metric([], pending)
    yield queue
    lag = GaugeMetricFamily(
        "agentladder_side_effects_oldest_seconds",
        "how long the oldest side effects in flight have been applied for (0 when none)",
    )
    lag.add_metric([], oldest_s)
    yield lag


def _route_of(scope: Scope) -> str:
    """The route's template; for a mounted app (static files), its mount's."""
    route = scope.get("route")
    if route is not None:
        return str(getattr(route, "path", "unmatched"))
    endpoint, app = scope.get("endpoint"), scope.get("app")
    for mount in getattr(app, "routes", ()):
        if isinstance(mount, Mount) and endpoint is not None and mount.app is endpoint:
            return f"{mount.path}/{{path}}"
    return "unmatched"


class _Measure:
    """Counts every request and observes its latency, up to the start of its response,
    by method and route (``unmatched`` for a path no route serves). A plain ASGI
    middleware: the response body passes through untouched."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()

        async def counted(message: Message) -> None:
            if message["type"] == "http.response.start":
                path = _route_of(scope)
                method = scope["method"]
                self.metrics.latency.labels(method, path).observe(time.perf_counter() - start)
                self.metrics.requests.labels(method, path, str(message["status"])).inc()
            await send(message)

        await self.app(scope, receive, counted)


def install_metrics(app: FastAPI) -> None:
    """Count every request and serve ``/metrics``."""
    metrics = Metrics()
    app.state.metrics = metrics
    app.add_middleware(_Measure, metrics=metrics)
    app.include_router(router)


@router.get("/metrics", include_in_schema=False)
async def serve_metrics(request: Request, services: ServicesDep) -> Response:
    """The current metrics in the Prometheus text format (with a ``metrics`` token
    configured, for a metrics or admin token only)."""
    book: TokenBook = request.app.state.tokens
    if book.metrics_locked:
        caller_of_request(request).require("metrics", what="GET /metrics")
    metrics: Metrics = request.app.state.metrics
    metrics.totals.bind(services, request.app)
    online = await services.registry.online()
    metrics.online.set(sum(online.values()))
    metrics.registered.set(len(online))
    running, waiting = services.orchestrator.load
    metrics.in_progress.labels("running").set(running)
    metrics.in_progress.labels("waiting").set(waiting)
    metrics.tasks_queued.set(services.tasks.queued)
    metrics.cooling.set(len(services.health.cooling()))
    unhealthy = [h.status.value for h in services.health.unhealthy().values()]
    for status in ("degraded", "down"):
        metrics.unhealthy.labels(status).set(unhealthy.count(status))
    for reason, count in (await probation_census(services.oracle)).items():
        metrics.on_probation.labels(reason).set(count)
    if services.skill.queue is not None:
        try:
            state = await services.skill.queue.state()
        except StoreUnavailable:  # the last values stay; /readyz says the store is away
            pass
        else:
            metrics.skill_queue_depth.set(state.depth)
            metrics.skill_lag.set(state.lag_s(time.time()))
    return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)
