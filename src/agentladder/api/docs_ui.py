"""``/docs`` and ``/redoc`` without the internet: Swagger UI and ReDoc served from a package.

FastAPI's own pages load their scripts and styles from a CDN, so on a machine without
internet ``/docs`` is blank. FastAPI's documented recipe for self-hosting them is
followed here, with the assets that the ``fastapi-offline`` package ships (Swagger UI 5,
which reads OpenAPI 3.1, ReDoc 2, a favicon), served under ``/docs-assets``.

Each page carries a Content-Security-Policy of its own (``docs_policy``): scripts from the
service and the page's own inline scripts, allowed by their SHA-256 hashes (FastAPI writes
one to start Swagger UI; the hashes are of the page as this module built it, never of
anything a request brought), styles inline too (Swagger UI and ReDoc add their own), a
web worker from a ``blob:`` (ReDoc's search), nothing from another host.
"""

from __future__ import annotations

import base64
import hashlib
import re

from fastapi import FastAPI, Request
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

__all__ = ["ASSETS", "docs_policy", "install_docs"]

ASSETS = "/docs-assets"
"""Where the Swagger UI and ReDoc files are served."""
DOCS, REDOC, REDIRECT = "/docs", "/redoc", "/docs/oauth2-redirect"
_INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.DOTALL)


def docs_policy(page: bytes) -> str:
    """The Content-Security-Policy of a docs page built here: its inline scripts by hash."""
    scripts = " ".join(
        ["'self'"]
        + [
            "'sha256-" + base64.b64encode(hashlib.sha256(script).digest()).decode() + "'"
            for script in _INLINE_SCRIPT.findall(page)
        ]
    )
    return (
        f"default-src 'self'; script-src {scripts}; style-src 'self' 'unsafe-inline';"
        " img-src 'self' data:; font-src 'self' data:; connect-src 'self';"
        " worker-src 'self' blob:; object-src 'none'; base-uri 'none'; form-action 'self';"
        " frame-ancestors 'none'"
    )


def _secured(page: HTMLResponse) -> HTMLResponse:
    page.headers["Content-Security-Policy"] = docs_policy(bytes(page.body))
    return page


def install_docs(app: FastAPI) -> None:
    """Serve ``/docs``, its OAuth2 redirect and ``/redoc`` from local assets only (the
    app is made with ``docs_url=None`` and ``redoc_url=None``)."""
    app.mount(ASSETS, StaticFiles(packages=[("fastapi_offline", "static")]), name="docs-assets")
    openapi = app.openapi_url or "/openapi.json"

    @app.get(DOCS, include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return _secured(
            get_swagger_ui_html(
                openapi_url=f"{root}{openapi}",
                title=f"{app.title} - Swagger UI",
                oauth2_redirect_url=f"{root}{REDIRECT}",
                swagger_js_url=f"{root}{ASSETS}/swagger-ui-bundle.js",
                swagger_css_url=f"{root}{ASSETS}/swagger-ui.css",
                swagger_favicon_url=f"{root}{ASSETS}/favicon.png",
                swagger_ui_parameters={"validatorUrl": None},  # no badge from validator.swagger.io
            )
        )

    @app.get(REDIRECT, include_in_schema=False)
    async def swagger_ui_redirect() -> HTMLResponse:
        return _secured(get_swagger_ui_oauth2_redirect_html())

    @app.get(REDOC, include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return _secured(
            get_redoc_html(
                openapi_url=f"{root}{openapi}",
                title=f"{app.title} - ReDoc",
                redoc_js_url=f"{root}{ASSETS}/redoc.standalone.js",
                redoc_favicon_url=f"{root}{ASSETS}/favicon.png",
                with_google_fonts=False,
            )
        )
