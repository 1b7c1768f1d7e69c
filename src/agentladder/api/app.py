"""``create_app(services)``: the FastAPI application over built services."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentladder import __version__
from agentladder.api.auth import TokenBook
from agentladder.api.deps import CheckedJson
from agentladder.api.errors import install_error_handlers
from agentladder.api.metrics import install_metrics
from agentladder.api.routes import (
    agent_tasks,
    agents,
    dashboard,
    deliberations,
    health,
    oracle,
    skills,
)
from agentladder.api.schemas import document
from agentladder.config import Settings
from agentladder.services.container import Services, build_services

__all__ = ["create_app", "create_served_app"]

log = logging.getLogger(__name__)


class BodyLimit:
    """Refuse request bodies over ``limit`` bytes with 413, before they are read whole.

    A declared Content-Length over the limit is refused at once; a body without one
    (chunked) is read up to the limit and refused as soon as it passes it. A body within
    the limit is buffered and handed on whole (the routes read it whole anyway).
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await _too_large(send, self.limit)
            return
        chunks: list[bytes] = []
        seen = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break  # the client left mid-body: the app is told so, as without this
            chunk: bytes = message.get("body", b"")
            seen += len(chunk)
            if seen > self.limit:
                await _too_large(send, self.limit)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                message = {"type": "http.request", "body": b"".join(chunks)}
                break
        body: Message | None = message

        async def replay() -> Message:
            nonlocal body
            if body is None:
                return await receive()  # after the body: waits for the disconnect
            message, body = body, None
            return message

        await self.app(scope, replay, send)


async def _too_large(send: Send, limit: int) -> None:
    body = (
        b'{"error":{"code":"payload_too_large","message":"the body is over '
        + str(limit).encode()
        + b' bytes"}}'
    )
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})  # fmt: skip
    await send({"type": "http.response.body", "body": body})


def _configure(app: FastAPI, settings: Settings) -> None:
    """Errors, routes, the dashboard's static files, the body limit, the metrics.

    Every JSON body is checked (``deps.CheckedJson``: huge numbers, NaN, lone
    surrogates, depth): the orchestrator's writes declare it after their role check, the
    agents' routes get it here. The metrics middleware is the outermost: 413s count too.
    """
    install_error_handlers(app)
    for module in (health, agent_tasks, agents, deliberations, oracle, skills, dashboard):
        checks = [CheckedJson] if module is agents else []
        app.include_router(module.router, dependencies=checks)
    app.mount("/static", StaticFiles(packages=[("agentladder.api", "static")]), name="static")
    app.add_middleware(BodyLimit, limit=settings.api.max_body_bytes)
    install_metrics(app)
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
    )
    app.state.services = services
    app.state.tokens = TokenBook(services.settings.api)
    if app.state.tokens.open_loopback:
        log.warning("no API tokens configured: writes are accepted from loopback clients only")
    _configure(app, services.settings)
    return app


def create_served_app(settings: Settings, store_url: str | None = None) -> FastAPI:
    """The API for ``agentladder serve``: services built at startup, closed at shutdown."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        services = await build_services(settings, store_url=store_url)
        services.start_background()
        inner = create_app(services)
        app.state.services = services
        app.state.tokens = inner.state.tokens
        try:
            yield
        finally:
            await services.close()

    app = FastAPI(
        title="agentladder", version=__version__, lifespan=lifespan,
        description="Reputation, ranking and trust for AI agents.",
    )  # fmt: skip
    _configure(app, settings)
    return app
