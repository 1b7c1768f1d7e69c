"""``SecurityHeaders``: what every response tells a browser, as an ASGI middleware.

Every response, the refusals of the request guard included:

- ``X-Content-Type-Options: nosniff``: a browser takes each body for the type it is
  sent as (a JSON error echoing ``<script>`` is never run as a page);
- ``X-Frame-Options: DENY`` and ``frame-ancestors 'none'``: no page of the service is
  shown inside another site's frame (clickjacking);
- ``Referrer-Policy: same-origin``: links to other sites carry no URL of the dashboard,
  while the dashboard's own writes keep their ``Origin`` (``no-referrer`` would make a
  browser send ``Origin: null`` on them, which the host guard refuses: ``api/hosts.py``);
- a ``Content-Security-Policy``: on an HTML page ``PAGE_POLICY`` (scripts, styles,
  images and requests from the service itself only, no inline script or style: the
  dashboard has none), unless the page set its own (``/docs`` and ``/redoc`` allow the
  hashes of their own inline scripts: ``api/docs_ui.py``); on anything else
  ``API_POLICY`` (nothing may load, nothing may frame it).
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["API_POLICY", "FIXED", "PAGE_POLICY", "SecurityHeaders"]

PAGE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
    " font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none';"
    " form-action 'self'; frame-ancestors 'none'"
)
"""The policy of the dashboard's pages."""

API_POLICY = "default-src 'none'; frame-ancestors 'none'"
"""The policy of every response that is not an HTML page (JSON, text, scripts, styles)."""

FIXED: tuple[tuple[bytes, bytes], ...] = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
)
"""The headers every response carries."""

_CSP = b"content-security-policy"


def _secured(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """``headers`` with the fixed headers and a policy added where absent."""
    names = {name.lower() for name, _ in headers}
    added = [(name, value) for name, value in FIXED if name not in names]
    if _CSP not in names:
        kind = next((v for n, v in headers if n.lower() == b"content-type"), b"")
        html = kind.split(b";")[0].strip().lower() == b"text/html"
        added.append((_CSP, (PAGE_POLICY if html else API_POLICY).encode()))
    return [*headers, *added]


class SecurityHeaders:
    """Add the headers the module lists to every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": _secured(list(message.get("headers", [])))}
            await send(message)

        await self.app(scope, receive, secured)
