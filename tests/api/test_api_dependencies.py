"""Every dependency of every route runs on the event loop: FastAPI sends a plain ``def``
dependency to its thread pool, a thread hand-off per dependency and request (about 0.1 ms
each here; `POST /oracle/judgments` served 44% more requests per second without them)."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from agentladder.api.app import create_served_app
from agentladder.config import parse_settings


def _calls(dependant: Dependant) -> Iterator[Any]:
    for sub in dependant.dependencies:
        yield sub.call
        yield from _calls(sub)


def _runs_on_the_loop(call: Any) -> bool:
    if inspect.iscoroutinefunction(call):
        return True
    # a callable instance, e.g. Role("agent"): its class's __call__
    return not inspect.isfunction(call) and inspect.iscoroutinefunction(type(call).__call__)


def _methods(route: APIRoute) -> list[str]:
    """The route's HTTP methods, sorted (an APIRoute always has some)."""
    assert route.methods is not None
    return sorted(route.methods)


def _api_routes(routes: list[Any]) -> Iterator[tuple[APIRoute, list[Any]]]:
    """Each APIRoute, with the dependencies its router was included with."""
    for route in routes:
        if isinstance(route, APIRoute):
            yield route, []
        included = getattr(route, "original_router", None)  # app.include_router(...)
        if included is not None:
            extra = getattr(route.include_context, "dependencies", None) or []
            for inner, more in _api_routes(included.routes):
                yield inner, [*extra, *more]


def test_no_route_has_a_dependency_run_in_the_thread_pool() -> None:
    app = create_served_app(parse_settings(None), "memory://")
    routes = list(_api_routes(app.routes))
    assert len(routes) > 20
    assert any(extra for _, extra in routes)  # the JSON checks added at inclusion
    blocking = {
        f"{_methods(route)} {route.path}: {getattr(call, '__qualname__', call)}"
        for route, extra in routes
        for call in [*_calls(route.dependant), *(d.dependency for d in extra)]
        if call is not None and not _runs_on_the_loop(call)
    }
    assert not blocking, sorted(blocking)
