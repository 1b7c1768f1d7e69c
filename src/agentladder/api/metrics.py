"""``GET /metrics``: Prometheus text: requests, latencies, deliberations, awards, agents, refusals.

Each app has its own registry (no process-global state, so several apps and tests can
live in one process).
"""

from __future__ import annotations

import time

from fastapi import APIRouter, FastAPI, Request, Response
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentladder.api.deps import ServicesDep
from agentladder.api.errors import refusals_of
from agentladder.services.oracle.probation import probation_census

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
        self.deliberations = Gauge(
            "agentladder_deliberations", "deliberations finished by this instance, by status",
            ("status",), registry=self.registry,
        )  # fmt: skip
        self.in_progress = Gauge(
            "agentladder_deliberations_in_progress",
            "deliberations on this instance now: running, or waiting for a slot",
            ("state",), registry=self.registry,
        )  # fmt: skip
        self.awards = Gauge(
            "agentladder_awards", "Oracle awards applied by this instance", ("kind",),
            registry=self.registry,
        )  # fmt: skip
        self.online = Gauge("agentladder_agents_online", "agents online", registry=self.registry)
        self.registered = Gauge(
            "agentladder_agents_registered", "agents registered", registry=self.registry
        )
        self.tasks_queued = Gauge(
            "agentladder_agent_tasks_queued",
            "tasks queued for agents that poll over HTTP, not yet taken", registry=self.registry,
        )  # fmt: skip
        self.refusals = Gauge(
            "agentladder_refusals",
            "refused attempts by reason: unauthenticated, invalid_token, forbidden_role"
            " (the API), self_promotion, impersonation, declaration_mismatch (the registry)",
            ("reason",), registry=self.registry,
        )  # fmt: skip
        self.validations = Gauge(
            "agentladder_validations",
            "verdicts recorded by this instance, by the rate reason in force when each came"
            " (level, audit, probation, model_change) and outcome (passed, failed)",
            ("reason", "outcome"), registry=self.registry,
        )  # fmt: skip
        self.sentinel_checks = Gauge(
            "agentladder_sentinel_checks",
            "should-validate decisions of this instance, by reason (requested, probation,"
            " model_change, sampled, skipped_by_level) and whether to validate",
            ("reason", "validate"), registry=self.registry,
        )  # fmt: skip
        self.on_probation = Gauge(
            "agentladder_agents_on_probation",
            "agents on probation now (in any task type or overall), by cause: probation,"
            " model_change", ("reason",), registry=self.registry,
        )  # fmt: skip


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
                path = getattr(scope.get("route"), "path", "unmatched")
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
    """The current metrics in the Prometheus text format."""
    metrics: Metrics = request.app.state.metrics
    online = await services.registry.online()
    metrics.online.set(sum(online.values()))
    metrics.registered.set(len(online))
    for status, count in services.orchestrator.finished.items():
        metrics.deliberations.labels(status).set(count)
    running, waiting = services.orchestrator.load
    metrics.in_progress.labels("running").set(running)
    metrics.in_progress.labels("waiting").set(waiting)
    for kind, count in services.oracle.awards.items():
        metrics.awards.labels(kind).set(count)
    metrics.tasks_queued.set(services.tasks.queued)
    refusals = services.registry.refusals + refusals_of(request.app)
    for reason, count in refusals.items():
        metrics.refusals.labels(reason).set(count)
    for (reason, outcome), count in services.sentinel.verdicts.items():
        metrics.validations.labels(reason, outcome).set(count)
    for (reason, validate), count in services.sentinel.decisions.items():
        metrics.sentinel_checks.labels(reason, str(validate).lower()).set(count)
    for reason, count in (await probation_census(services.oracle)).items():
        metrics.on_probation.labels(reason).set(count)
    return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)
