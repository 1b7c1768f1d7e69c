"""``HostGuard``: the ``Host`` (and, for writes, ``Origin``) a request names must be one
this server answers to, against DNS rebinding.

A web page on ``evil.example`` can make its own name resolve to 127.0.0.1 (DNS
rebinding); the browser then sends the page's requests to the server on loopback, which
in the default mode (no tokens) accepts writes from loopback clients. What the browser
cannot change is the ``Host`` it sends: the page's name. So every request's ``Host`` must
be one of (``AllowedHosts``):

- the loopback names: ``localhost``, any loopback IP literal (``127.0.0.1``, ``[::1]``);
- the address ``serve`` listens on (``--host``), unless it is a wildcard (``0.0.0.0``,
  ``::``), which names no address: then any IP literal is allowed (a browser sends an IP
  literal only to a page whose origin is that address: no name, nothing to rebind), and
  names must be listed;
- ``api.allowed_hosts``: names (``agentladder.internal``), ``.example.com`` for a domain
  and every name under it, or ``*`` for any host (Django's ``ALLOWED_HOSTS`` forms; ``*``
  only behind a proxy that checks the name itself);

with or without a port, case and a final dot ignored. A request without ``Host`` (HTTP/1.0;
never a browser) passes. A write (POST, PUT, PATCH, DELETE) carrying ``Origin`` must name
an allowed host there too (a browser's cross-origin write; ``Origin: null``, a sandboxed
or local page, is refused). Each refusal is 400 in the one error shape
(``host_not_allowed``, ``origin_not_allowed``), answered before routing and before the
body is read, logged and counted (``agentladder_refusals_total{reason}``).
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from agentladder.api.errors import log_refusal, refusals_of
from agentladder.api.limits import refuse

__all__ = ["LOOPBACK_NAMES", "WILDCARDS", "AllowedHosts", "HostGuard", "host_of"]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
"""Allowed whatever the configuration (with any loopback IP literal)."""
WILDCARDS = frozenset({"0.0.0.0", "::", ""})
"""Listening addresses that name every address of the machine."""
_WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_MAX_SHOWN = 100


def host_of(value: str) -> str | None:
    """The host of a ``Host`` header value (``name``, ``name:port``, ``[v6]:port``):
    lowercased, without a final dot; None when it is no host at all."""
    text = value.strip().lower()
    if text.startswith("["):
        inside, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not (rest.startswith(":") and rest[1:].isdigit())):
            return None
        try:
            return str(ipaddress.IPv6Address(inside))
        except ValueError:
            return None
    name, colon, port = text.rpartition(":")
    if colon and port.isdigit():
        text = name
    text = text.removesuffix(".")
    if not text or not text.isascii() or any(c in text for c in " /\\@[]:?#"):
        return None
    return text


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _normal(entry: str) -> str:
    """A configured host or listening address as ``host_of`` gives a request's."""
    address = _ip(entry.strip("[]"))
    return str(address) if address is not None else (host_of(entry) or entry.lower())


@dataclass(frozen=True)
class AllowedHosts:
    """The hosts a request may name (the module says which)."""

    names: frozenset[str]
    domains: tuple[str, ...] = ()
    any_ip: bool = False
    anything: bool = False

    @classmethod
    def of(cls, configured: Iterable[str], bound: str | None = None) -> AllowedHosts:
        """The loopback names, ``bound`` (the listening address) and ``configured``
        (``api.allowed_hosts``)."""
        names = set(LOOPBACK_NAMES)
        domains: list[str] = []
        anything = False
        for given in configured:
            entry = given.strip().lower().removesuffix(".")
            if entry == "*":
                anything = True
            elif entry.startswith("."):
                domains.append(entry)
            else:
                names.add(_normal(entry))
        wildcard = bound is not None and bound.strip("[]") in WILDCARDS
        if bound is not None and not wildcard:
            names.add(_normal(bound))
        return cls(frozenset(names), tuple(domains), wildcard, anything)

    def allows(self, host: str) -> bool:
        """Whether ``host`` (as ``host_of`` gives it) is one this server answers to."""
        if self.anything or host in self.names:
            return True
        address = _ip(host)
        if address is not None:
            return address.is_loopback or self.any_ip
        return any(host == domain[1:] or host.endswith(domain) for domain in self.domains)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers") or []:
        if key == name:
            text: str = value.decode("latin-1")
            return text
    return None


def _shown(value: str) -> str:
    return json.dumps(value[:_MAX_SHOWN])


class HostGuard:
    """Refuse a request whose ``Host`` (or a write's ``Origin``) is not allowed."""

    def __init__(self, app: ASGIApp, allowed: AllowedHosts) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = _header(scope, b"host")
        if host is not None:
            found = host_of(host)
            if found is None or not self.allowed.allows(found):
                why = (f"the Host {_shown(host)} is not a name this server answers to: add it"
                       " to api.allowed_hosts (docs/api.md, \"Allowed hosts\")")  # fmt: skip
                await self._refuse(scope, send, "host_not_allowed", why)
                return
        origin = _header(scope, b"origin")
        if origin is not None and scope["method"] in _WRITES and not self._origin_allowed(origin):
            why = (f"a write from the web page at Origin {_shown(origin)} is refused: only"
                   " pages of an allowed host may write (api.allowed_hosts)")  # fmt: skip
            await self._refuse(scope, send, "origin_not_allowed", why)
            return
        await self.app(scope, receive, send)

    def _origin_allowed(self, origin: str) -> bool:
        parts = urlsplit(origin.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return False  # "null": a sandboxed frame, a file, a data: URL
        found = host_of(parts.netloc)
        return found is not None and self.allowed.allows(found)

    async def _refuse(self, scope: Scope, send: Send, reason: str, message: str) -> None:
        refusals_of(scope["app"])[reason] += 1
        log_refusal(Request(scope), reason, message)
        await refuse(send, 400, reason, message)
