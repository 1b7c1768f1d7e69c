"""Dependencies of the routes: the services, the caller, its role, and a checked JSON body.

``Role("orchestrator")`` on a write route refuses the wrong caller before its body is
validated, so an agent posting a judgment is always a counted 403 whatever it sent. It is
also the one declaration of who may call a route: the refusals name its roles
(``api/route_roles.py`` reads them for the guard's 401 and for the docs' test); a plain
Starlette route declares them with ``requires``.
``checked_json`` refuses, with 422 naming the field, what JSON parses but no field may
hold: numbers beyond 2**53 in magnitude (``10**30``, ``1e308``), ``NaN`` and infinities
(``1e400`` parses as one), strings with lone surrogates (``"\\ud800"``, which no store can
encode); and with 400 a body nested deeper than 64 levels.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Request

from agentladder.api.auth import CALLER_KEY, Caller, TokenBook, caller_of
from agentladder.api.errors import ApiError
from agentladder.errors import InvalidInput
from agentladder.services.container import Services

__all__ = [
    "MAX_JSON_DEPTH",
    "MAX_JSON_NUMBER",
    "MAX_OFFSET",
    "ROLES_ATTRIBUTE",
    "AgentDep",
    "CallerDep",
    "CheckedJson",
    "Role",
    "ServicesDep",
    "caller_of_request",
    "check_json",
    "is_json",
    "requires",
    "what_of",
]

MAX_OFFSET = 1_000_000_000
"""The largest page offset or rank a query may name (SQLite integers are 64-bit)."""

MAX_JSON_NUMBER = 2**53
"""The largest magnitude of a number in a request body: the integers a JSON number carries
exactly, far below where a sum, a mean or a cost per round could overflow to infinity."""

MAX_JSON_DEPTH = 64
"""The deepest nesting of arrays and objects in a request body (the API needs 4)."""

_SURROGATES = re.compile("[\\ud800-\\udfff]")
_WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


# The dependencies are ``async def`` although they never wait: FastAPI runs a plain
# ``def`` dependency in its thread pool, a hand-off to a thread and back per dependency
# and request (about 0.1 ms each on this machine; docs/benchmarks.md, "HTTP").


async def _services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


def caller_of_request(request: Request) -> Caller:
    """The authenticated caller (``CallerDep`` without FastAPI: a plain route's)."""
    caller: Caller | None = request.scope.get(CALLER_KEY)  # a write's, from the guard
    if caller is None:
        book: TokenBook = request.app.state.tokens
        caller = caller_of(request, book)
    request.state.caller = caller  # for the log line of a refusal
    return caller


async def _caller(request: Request) -> Caller:
    return caller_of_request(request)


ServicesDep = Annotated[Services, Depends(_services)]
CallerDep = Annotated[Caller, Depends(_caller)]


def what_of(request: Request) -> str:
    """The call as a refusal names it: ``POST /oracle/judgments`` (the route's path, its
    parameters unfilled, once routed)."""
    route = request.scope.get("route")
    path = getattr(route, "path", None) or request.url.path
    return f"{request.method} {path}"


class Role:
    """A route dependency: the caller must have one of ``roles`` (admin always)."""

    def __init__(self, *roles: str) -> None:
        self.roles = roles

    async def __call__(self, request: Request, caller: CallerDep) -> Caller:
        return caller.require(*self.roles, what=what_of(request))


AgentDep = Annotated[Caller, Depends(Role("agent"))]
"""The caller, an agent's token (or an admin's)."""

ROLES_ATTRIBUTE = "agentladder_roles"
"""Where ``requires`` leaves a plain route's roles."""
F = TypeVar("F", bound=Callable[..., Any])


def requires(*roles: str) -> Callable[[F], F]:
    """Declare the roles of a plain Starlette route (one without FastAPI's dependencies),
    which checks them itself with ``caller.require`` (``route_roles.py`` reads them)."""

    def mark(endpoint: F) -> F:
        setattr(endpoint, ROLES_ATTRIBUTE, roles)
        return endpoint

    return mark


def _field(path: list[str | int]) -> str:
    return ".".join(str(part) for part in path) or "body"


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_json(value: Any) -> None:
    """Refuse what parsed JSON may not hold (see the module); iterative, any depth."""
    stack: list[tuple[Any, list[str | int]]] = [(value, [])]
    while stack:
        item, path = stack.pop()
        if isinstance(item, dict | list):
            if len(path) >= MAX_JSON_DEPTH:
                raise ApiError(
                    400, "bad_request", f"the body is nested deeper than {MAX_JSON_DEPTH} levels"
                )
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in reversed(list(pairs)):  # popped in document order
                if isinstance(key, str) and _SURROGATES.search(key):
                    raise InvalidInput(_field([*path, key[:64]]), key[:64], "is not valid Unicode")
                stack.append((child, [*path, key]))
        elif isinstance(item, str) and _SURROGATES.search(item):
            raise InvalidInput(_field(path), item[:64], "is not valid Unicode (lone surrogate)")
        elif isinstance(item, float) and not math.isfinite(item):
            raise InvalidInput(_field(path), item, "must be a finite number")
        elif _number(item) and abs(item) > MAX_JSON_NUMBER:
            raise InvalidInput(_field(path), item, "must be at most 2**53 in magnitude")


def is_json(content_type: str | None) -> bool:
    """Whether FastAPI parsed the body as JSON (it does for these content types only)."""
    if not content_type:
        return False
    kind = content_type.partition(";")[0].strip().lower()
    main, _, sub = kind.partition("/")
    return main == "application" and (sub == "json" or sub.endswith("+json"))


async def _checked_json(request: Request) -> None:
    if request.method not in _WRITES or not is_json(request.headers.get("content-type")):
        return
    if not await request.body():
        return
    check_json(await request.json())  # parsed once: the request caches what FastAPI read


CheckedJson = Depends(_checked_json)
"""A route dependency: a JSON body's numbers, strings and depth are checked."""
