"""Who is calling: bearer tokens with roles, or, with no tokens configured, loopback only.

Roles: ``admin`` (everything, the admin API), ``orchestrator`` (deliberations, judgments,
results, validations), ``agent`` (heartbeats for its own agent_id only). Reading public
data needs no token. With no tokens configured the service accepts writes from loopback
clients only (as admin) and says so at start.

Every refusal is a ``CallRefused`` with its reason (``unauthenticated``: no token;
``invalid_token``: an unknown token or not a bearer one; ``forbidden_role``: the role may
not); the error handlers log it with the route, role and agent and count it for /metrics.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass

from fastapi import Request

from agentladder.api.errors import CallRefused
from agentladder.config import ApiSettings, TokenSettings

__all__ = ["Caller", "TokenBook", "caller_of"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Caller:
    """The authenticated caller (``role`` None: anonymous, may only read)."""

    role: str | None
    agent_id: str | None = None

    def require(self, *roles: str) -> Caller:
        """The caller if it has one of ``roles`` (admin always), else 401 or 403."""
        if self.role is None:
            raise CallRefused(
                401, "unauthorized", "a bearer token is required", reason="unauthenticated"
            )
        if self.role != "admin" and self.role not in roles:
            raise CallRefused(
                403, "forbidden", f"the {self.role} role may not do this", reason="forbidden_role"
            )
        return self


class TokenBook:
    """The configured tokens, resolved from the config and the environment."""

    def __init__(self, settings: ApiSettings, environ: Mapping[str, str] = os.environ) -> None:
        self._tokens: list[tuple[bytes, TokenSettings]] = []
        for entry in settings.tokens:
            value = entry.token if entry.token is not None else environ.get(entry.token_env or "")
            if not value:
                log.warning("token variable %s is not set: that token is disabled", entry.token_env)
                continue
            self._tokens.append((value.encode(), entry))

    @property
    def open_loopback(self) -> bool:
        """True when no token is configured: loopback clients may write."""
        return not self._tokens

    def find(self, token: str) -> TokenSettings | None:
        """The token's settings, compared in constant time."""
        found = None
        for value, entry in self._tokens:
            if hmac.compare_digest(value, token.encode()):
                found = entry
        return found


def _loopback(request: Request) -> bool:
    host = request.client.host if request.client else ""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host in ("localhost", "testclient")


def caller_of(request: Request, book: TokenBook) -> Caller:
    """Authenticate a request."""
    header = request.headers.get("authorization", "")
    if header:
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise CallRefused(
                401, "unauthorized", "use 'Authorization: Bearer <token>'", reason="invalid_token"
            )
        entry = book.find(token.strip())
        if entry is None:
            raise CallRefused(401, "unauthorized", "unknown token", reason="invalid_token")
        return Caller(entry.role, entry.agent_id)
    if book.open_loopback and _loopback(request):
        return Caller("admin")
    return Caller(None)
