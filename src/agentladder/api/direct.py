"""``DirectRoute``: a FastAPI route whose valid requests skip FastAPI's per-request work.

For each request FastAPI solves the route's dependencies (each a coroutine), validates the
body, then validates and encodes the answer again through the response model. For the
most requested write, ``POST /oracle/judgments``, answering its valid requests directly
took 0.87 of the CPU a request (docs/benchmarks.md, "``POST /oracle/judgments`` answered
directly").

A ``DirectRoute`` is declared like any route (its endpoint's signature, models and
dependencies make its OpenAPI entry and its behaviour), with a ``direct`` handler besides:
a coroutine that answers the requests it can answer on its own, the valid ones of a
caller with the role, and returns None for every other. FastAPI's own handler then
answers it as the declaration says, so a refusal or an error (401, 403, 400, 422, the
body's checks) is the declared route's, word for word: one behaviour, with a shorter way
through for the requests that need nothing else. A subclass sets ``direct``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute

__all__ = ["Direct", "DirectRoute"]

Direct = Callable[[Request], Awaitable[Response | None]]


class DirectRoute(APIRoute):
    """A route whose ``direct`` handler answers first; None from it: FastAPI's."""

    @staticmethod
    async def direct(request: Request) -> Response | None:
        """The answer to ``request`` without FastAPI, or None: here, always None."""
        del request
        return None

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        """FastAPI's handler, behind the class's ``direct`` one (read at each request)."""
        declared = super().get_route_handler()
        route = type(self)

        async def handler(request: Request) -> Response:
            answer = await route.direct(request)
            return answer if answer is not None else await declared(request)

        return handler
