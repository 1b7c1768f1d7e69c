"""The roles each route declares (``Role`` in ``api/deps.py``, or ``requires`` on a plain
route), read from the routers' routes: the guard's 401 for a write without a token names
them before the route runs (``RouteRoles`` on ``app.state.route_roles``), and the docs'
test checks docs/client.md against them."""

from __future__ import annotations

from collections.abc import Iterable

from fastapi import APIRouter
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute, Match
from starlette.types import Scope

from agentladder.api.deps import ROLES_ATTRIBUTE, Role

__all__ = ["RouteRoles", "roles_of_route"]


def _in(dependant: Dependant) -> tuple[str, ...] | None:
    for dependency in dependant.dependencies:
        if isinstance(dependency.call, Role):
            return dependency.call.roles
        found = _in(dependency)
        if found is not None:
            return found
    return None


def roles_of_route(route: BaseRoute) -> tuple[str, ...] | None:
    """The roles ``route`` declares, None when it declares none (anyone may, or it checks
    a role only for some of its calls, such as ``fresh=true``)."""
    if isinstance(route, APIRoute):
        return _in(route.dependant)
    endpoint = getattr(route, "endpoint", None)
    roles: tuple[str, ...] | None = getattr(endpoint, ROLES_ATTRIBUTE, None)
    return roles


class RouteRoles:
    """Each route of ``routers`` (included without a prefix) with the roles it declares."""

    def __init__(self, routers: Iterable[APIRouter]) -> None:
        self.routes = [(route, roles_of_route(route)) for r in routers for route in r.routes]

    def of(self, scope: Scope) -> tuple[tuple[str, ...] | None, str]:
        """The roles the route answering ``scope`` declares (None: none declared, or no
        such route), and the call as a refusal names it (``POST /oracle/judgments``)."""
        for route, roles in self.routes:
            match, _ = route.matches(scope)
            if match == Match.FULL:
                return roles, f"{scope['method']} {getattr(route, 'path', scope['path'])}"
        return None, f"{scope['method']} {scope['path']}"

    def table(self) -> dict[tuple[str, str], tuple[str, ...] | None]:
        """``(method, path template)`` of every route, with its roles."""
        return {
            (method, str(getattr(route, "path", ""))): roles
            for route, roles in self.routes
            for method in sorted(getattr(route, "methods", None) or ())
        }
