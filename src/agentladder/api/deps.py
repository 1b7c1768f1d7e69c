"""Dependencies of the routes: the services and the caller, as ``Annotated`` types."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from agentladder.api.auth import Caller, TokenBook, caller_of
from agentladder.services.container import Services

__all__ = ["MAX_OFFSET", "CallerDep", "ServicesDep"]

MAX_OFFSET = 1_000_000_000
"""The largest page offset or rank a query may name (SQLite integers are 64-bit)."""


def _services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


def _caller(request: Request) -> Caller:
    book: TokenBook = request.app.state.tokens
    return caller_of(request, book)


ServicesDep = Annotated[Services, Depends(_services)]
CallerDep = Annotated[Caller, Depends(_caller)]
