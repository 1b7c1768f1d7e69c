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
Its message tells which: no token names the roles the call needs (as its route declares
them, ``Role`` in ``api/deps.py``), a token matching no configured one says so (never
echoing it), a role that may not names the roles that may and the token's.

``token_notes``: what ``serve`` will accept given which ``token_env`` variables are set,
told by ``agentladder config check`` and logged by ``serve`` at start.
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
    "NO_MATCH",
    "PROXY_HEADERS",
    "Caller",
    "TokenBook",
    "caller_of",
    "loopback_client",
    "needs",
    "token_notes",
    "unauthenticated",
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

    def require(self, *roles: str, what: str = "this call") -> Caller:
        """The caller if it has one of ``roles`` (admin always), else 401 or 403 naming
        ``what`` and the roles that may."""
        if self.role is None:
            raise unauthenticated(what, roles)
        if not self.may(*roles):
            raise CallRefused(
                403, "forbidden", f"{what} needs role {needs(roles)}; this token's role is"
                f" {self.role}", reason="forbidden_role",
            )  # fmt: skip
        return self


def needs(roles: tuple[str, ...] | list[str]) -> str:
    """The roles that may, in words: ``orchestrator or admin`` (admin always may)."""
    named = [role for role in roles if role != "admin"] + ["admin"]
    return named[0] if len(named) == 1 else ", ".join(named[:-1]) + " or " + named[-1]


def unauthenticated(what: str, roles: tuple[str, ...] | None) -> CallRefused:
    """The 401 of a call without a token: ``roles`` those its route declares (None: not
    known before the route runs)."""
    role = f" (role {needs(roles)})" if roles is not None else ""
    return CallRefused(
        401, "unauthorized",
        f"{what} needs a bearer token{role}; send 'Authorization: Bearer <token>'",
        reason="unauthenticated",
    )  # fmt: skip


NO_MATCH = "the bearer token matches no configured token"
"""The 401 of a token that is none of the configured ones (the token is never echoed)."""


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
                continue  # disabled: told by token_notes
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
            raise CallRefused(401, "unauthorized", NO_MATCH, reason="invalid_token")
        return Caller(entry.role, entry.agent_id, entry)
    if book.open_loopback and _loopback(request):
        return Caller("admin")
    return Caller(None)


_WRITERS = ("admin", "orchestrator", "agent", "client")
"""The roles whose tokens write (a ``metrics`` token only reads ``/metrics``)."""


def token_notes(settings: ApiSettings, environ: Mapping[str, str] = os.environ) -> list[str]:
    """One warning per ``token_env`` that is unset (naming the role and the variable), and
    then what ``serve`` would accept: with tokens configured and none set, no write at all
    (loopback is open only when no token is configured); with some set, writes with those
    roles' tokens only. Nothing when every configured token is set."""
    unset = [
        entry for entry in settings.tokens
        if entry.token is None and not environ.get(entry.token_env or "")
    ]  # fmt: skip
    if not unset:
        return []
    notes = [
        f"the {entry.role} token's variable {entry.token_env} is not set: that token is disabled"
        for entry in unset
    ]
    live = [entry.role for entry in settings.tokens if entry not in unset]
    writers = sorted({role for role in live if role in _WRITERS}, key=_WRITERS.index)
    if not live:
        notes.append(
            "no token is set: serve will accept no write at all (tokens are configured, so"
            " loopback clients are not trusted either); reads stay open"
        )
    elif not writers:
        notes.append("no writing role has a token set: serve will accept no write")
    else:
        roles = " and ".join(writers)
        token = "token is" if len(writers) == 1 else "tokens are"
        notes.append(
            f"only the {roles} {token} set: serve will accept writes with"
            f" {' or '.join(writers)} tokens only"
        )
    return notes
