"""Who is calling: bearer tokens with roles, or, with no tokens configured, loopback only.

Roles: ``admin`` (everything, the admin API), ``orchestrator`` (deliberations, judgments,
results, validations), ``agent`` (heartbeats for its own agent_id only), ``client`` (the
gateway's ``/v1`` endpoints only, docs/gateway.md), ``metrics`` (``GET /metrics`` only: once
a metrics token is configured, ``/metrics`` needs it or an admin's). Reading public data
needs no token. With no tokens configured the service accepts writes from loopback
clients only (as admin) and says so at start. A loopback client is one whose address is a
loopback IP literal (``127.0.0.0/8``, ``::1``); a request carrying a proxy header
(``X-Forwarded-For``, ``Forwarded``, ``X-Real-IP``) never is, since it came through a
proxy (or claims to), and open-loopback mode refuses to start with ``api.trusted_proxies``
(behind a proxy every client would be loopback).

Every refusal is a ``CallRefused`` with its reason (``unauthenticated``: no token;
``invalid_token``: an unknown token or not a bearer one; ``forbidden_role``: the role may
not); the error handlers log it with the route, role and agent and count it for /metrics.
"""

from __future__ import annotations

import functools
import hmac
import ipaddress
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass

from fastapi import Request

from agentladder.api.errors import CallRefused
from agentladder.config import ApiSettings, TokenSettings
from agentladder.errors import InvalidInput

__all__ = [
    "CALLER_KEY",
    "MIN_TOKEN_LENGTH",
    "PROXY_HEADERS",
    "Caller",
    "TokenBook",
    "caller_of",
    "loopback_client",
]

log = logging.getLogger(__name__)

MIN_TOKEN_LENGTH = 16
"""The shortest token accepted, inline or from ``token_env``."""

CALLER_KEY = "agentladder.caller"
"""The ASGI scope's key under which the request guard leaves a write's authenticated
caller (``api/limits.py``), so the route's dependency does not authenticate it again."""

PROXY_HEADERS = (b"x-forwarded-for", b"forwarded", b"x-real-ip")
"""Headers a proxy adds: a request carrying one is not trusted as loopback."""


@dataclass(frozen=True)
class Caller:
    """The authenticated caller (``role`` None: anonymous, may only read)."""

    role: str | None
    agent_id: str | None = None
    token: TokenSettings | None = None

    def may(self, *roles: str) -> bool:
        """Whether the caller has one of ``roles`` (admin always)."""
        return self.role is not None and (self.role == "admin" or self.role in roles)

    def require(self, *roles: str) -> Caller:
        """The caller if it has one of ``roles`` (admin always), else 401 or 403."""
        if self.role is None:
            raise CallRefused(
                401, "unauthorized", "a bearer token is required", reason="unauthenticated"
            )
        if not self.may(*roles):
            raise CallRefused(
                403, "forbidden", f"the {self.role} role may not do this", reason="forbidden_role"
            )
        return self


class TokenBook:
    """The configured tokens, resolved from the config and the environment."""

    def __init__(self, settings: ApiSettings, environ: Mapping[str, str] = os.environ) -> None:
        """``InvalidInput`` for a token from ``token_env`` shorter than 16 characters, or
        for ``trusted_proxies`` with no token configured."""
        self._tokens: list[tuple[bytes, TokenSettings]] = []
        self.open_loopback = not settings.tokens
        """True when no token is configured: loopback clients may write. (Tokens
        configured but all disabled, their variables unset, open nothing.)"""
        self.metrics_locked = any(entry.role == "metrics" for entry in settings.tokens)
        """True when a ``metrics`` token is configured: ``/metrics`` needs it or an
        admin's (also while its variable is unset: configured, it closes ``/metrics``)."""
        if self.open_loopback and settings.trusted_proxies:
            raise InvalidInput(
                "api.trusted_proxies", list(settings.trusted_proxies),
                "needs api.tokens: with no tokens, writes are accepted from loopback, and"
                " behind a proxy every client is loopback",
            )  # fmt: skip
        for index, entry in enumerate(settings.tokens):
            value = entry.token if entry.token is not None else environ.get(entry.token_env or "")
            if not value:
                log.warning("token variable %s is not set: that token is disabled", entry.token_env)
                continue
            if len(value) < MIN_TOKEN_LENGTH:
                raise InvalidInput(
                    f"api.tokens[{index}].token_env", entry.token_env,
                    f"holds a token of {len(value)} characters; at least"
                    f" {MIN_TOKEN_LENGTH} are needed",
                )  # fmt: skip
            self._tokens.append((value.encode(), entry))

    def find(self, token: str) -> TokenSettings | None:
        """The token's settings, compared in constant time."""
        found = None
        for value, entry in self._tokens:
            if hmac.compare_digest(value, token.encode()):
                found = entry
        return found


def loopback_client(client: tuple[str, int] | None, headers: list[tuple[bytes, bytes]]) -> bool:
    """Whether a request comes straight from a loopback address: an IP literal (a name
    such as ``localhost`` is not one), with no proxy header."""
    if client is None or any(name in PROXY_HEADERS for name, _ in headers):
        return False
    return _loopback_ip(client[0])


@functools.lru_cache(maxsize=1024)
def _loopback_ip(host: str) -> bool:
    """Whether ``host`` is a loopback IP literal (kept for the clients seen last: a
    request's check would otherwise parse its address each time)."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _loopback(request: Request) -> bool:
    client = request.scope.get("client")
    return loopback_client(None if client is None else tuple(client), request.scope["headers"])


GATEWAY_PREFIX = "/v1/"
"""The OpenAI-compatible routes, whose clients always send a key (``docs/gateway.md``)."""


def caller_of(request: Request, book: TokenBook) -> Caller:
    """Authenticate a request. With no tokens configured, a loopback caller of the
    gateway is admin whatever key it sends: OpenAI's clients cannot send none, and a
    loopback caller may do everything in that mode anyway."""
    header = request.headers.get("authorization", "")
    if header and book.open_loopback and request.url.path.startswith(GATEWAY_PREFIX):
        header = "" if _loopback(request) else header
    if header:
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise CallRefused(
                401, "unauthorized", "use 'Authorization: Bearer <token>'", reason="invalid_token"
            )
        entry = book.find(token.strip())
        if entry is None:
            raise CallRefused(401, "unauthorized", "unknown token", reason="invalid_token")
        return Caller(entry.role, entry.agent_id, entry)
    if book.open_loopback and _loopback(request):
        return Caller("admin")
    return Caller(None)
