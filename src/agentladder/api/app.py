"""``create_app(services)``: the FastAPI application over built services."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.types import ASGIApp

from agentladder import __version__
from agentladder.api.auth import TokenBook, token_notes
from agentladder.api.caller_bounds import CallerBounds
from agentladder.api.deps import CheckedJson
from agentladder.api.docs_ui import install_docs
from agentladder.api.errors import install_error_handlers
from agentladder.api.headers import SecurityHeaders
from agentladder.api.heap import freeze_startup_heap
from agentladder.api.hosts import AllowedHosts, HostGuard
from agentladder.api.limits import RequestGuard
from agentladder.api.metrics import install_metrics
from agentladder.api.route_roles import RouteRoles
from agentladder.api.routes import (
    agent_outcomes,
    agent_tasks,
    agents,
    card,
    dashboard,
    dashboard_agent,
    dashboard_routing,
    dashboard_traffic,
    deliberations,
    gateway,
    health,
    oracle,
    oracle_batch,
    routing,
    skill_fit,
    skill_judges,
    skills,
)
from agentladder.api.schemas import document
from agentladder.config import Settings
from agentladder.providers.preflight import missing_keys
from agentladder.services.container import Services, build_services

__all__ = ["ROUTE_MODULES", "create_app", "create_served_app"]

log = logging.getLogger(__name__)


ROUTE_MODULES = (
    gateway, oracle, oracle_batch, health, agent_tasks, agent_outcomes, agents, card,
    deliberations, skills, skill_fit, skill_judges, routing, dashboard, dashboard_agent,
    dashboard_routing, dashboard_traffic,
)  # fmt: skip
"""The modules whose routers the app includes, in this order (see ``_configure``)."""


def _configure(app: FastAPI, settings: Settings, bound: str | None = None) -> None:
    """Errors, routes, the dashboard's static files, the host and request guards, the
    metrics. ``bound``: the address ``serve`` listens on (``api/hosts.py``).

    Every JSON body is checked (``deps.CheckedJson``: huge numbers, NaN, lone
    surrogates, depth): the orchestrator's writes declare it after their role check, the
    agents' routes get it here. The metrics middleware is the outermost of the app's
    own: the guard's refusals count too. The security headers (``api/headers.py``) wrap
    everything, Starlette's answer to an unhandled error included.
    """
    install_error_handlers(app)
    # Routes are matched in this order, and no two of them match the same path: the
    # gateway's and the Oracle's (the most requested writes) first, so that a request
    # of theirs is not tried against the other routes' patterns on its way.
    for module in ROUTE_MODULES:
        checks = [CheckedJson] if module is agents else []
        app.include_router(module.router, dependencies=checks)
    app.state.route_roles = RouteRoles(module.router for module in ROUTE_MODULES)
    app.mount("/static", StaticFiles(packages=[("agentladder.api", "static")]), name="static")
    install_docs(app)
    api = settings.api
    app.add_middleware(
        RequestGuard, max_body_bytes=api.max_body_bytes, body_timeout_s=api.body_timeout_s,
        bounds=CallerBounds(api),
        gateway_max_body_bytes=settings.gateway.max_body_bytes,
    )  # fmt: skip
    app.add_middleware(HostGuard, allowed=AllowedHosts.of(api.allowed_hosts, bound))
    install_metrics(app)
    built = app.build_middleware_stack

    def secured() -> ASGIApp:  # outside Starlette's own 500 handler: its answers too
        return SecurityHeaders(built())

    app.build_middleware_stack = secured  # type: ignore[method-assign]
    generated = app.openapi

    def completed() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = document(generated())
        return app.openapi_schema

    app.openapi = completed  # type: ignore[method-assign]


def create_app(services: Services) -> FastAPI:
    """The API over ``services`` (the caller owns and closes them)."""
    app = FastAPI(
        title="agentladder",
        version=__version__,
        description="Reputation, ranking and trust for AI agents.",
        docs_url=None,  # served from local assets (api/docs_ui.py)
        redoc_url=None,
    )
    app.state.services = services
    app.state.tokens = TokenBook(services.settings.api)
    if app.state.tokens.open_loopback:
        log.warning("no API tokens configured: writes are accepted from loopback clients only")
    for note in token_notes(services.settings.api):
        log.warning("%s", note)
    tokens = services.settings.api.tokens
    if any(t.role == "client" for t in tokens) and not app.state.tokens.metrics_locked:
        log.warning(
            "client tokens and no metrics token configured: /metrics shows the clients' names,"
            " budgets and spend to anyone who reaches it (add a token of role metrics)"
        )
    _configure(app, services.settings)
    return app


def create_served_app(
    settings: Settings,
    store_url: str | None = None,
    bound: str | None = None,
    *,
    freeze_heap: bool = False,
) -> FastAPI:
    """The API for ``agentladder serve``: services built at startup, closed at shutdown;
    ``bound`` is the address it listens on (a request naming it is allowed). With
    ``freeze_heap`` (the process's own server) the heap built by start-up is moved out of
    the collector's sight once started (``freeze_startup_heap``)."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            services = await build_services(settings, store_url=store_url)
        except BaseException as error:
            app.state.startup_failure = error  # told in one line (api/server.py)
            raise
        for name, why in missing_keys(settings).items():
            log.warning("agent %s is down from the start: %s (providers/preflight.py)", name, why)
        services.start_background()
        inner = create_app(services)
        app.state.services = services
        app.state.tokens = inner.state.tokens
        if freeze_heap:
            freeze_startup_heap()
        try:
            yield
        finally:
            stopped_by = getattr(app.state, "stop_signal", None)
            cause = (
                "the service stopped"
                if stopped_by is None
                else f"the service was stopped ({stopped_by})"
            )
            await services.close(cause)

    app = FastAPI(
        title="agentladder", version=__version__, lifespan=lifespan,
        description="Reputation, ranking and trust for AI agents.",
        docs_url=None, redoc_url=None,  # served from local assets (api/docs_ui.py)
    )  # fmt: skip
    _configure(app, settings, bound)
    return app
