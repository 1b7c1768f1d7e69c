"""Security headers against a real `agentladder serve` on loopback: every HTML page has a
Content-Security-Policy (no inline script allowed on the dashboard's, the docs' own
scripts by hash), ``frame-ancestors 'none'`` and ``X-Frame-Options: DENY``, a
``Referrer-Policy``; every response, refusals and errors included, ``nosniff``. Before:
none of these headers on any response."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

import httpx

from tests.served import start_server

CONFIG = """
agents:
  - name: sim_a
    backend: {kind: simulated, quality: 7.0}
  - name: sim_b
    backend: {kind: simulated, quality: 8.0}
api:
  max_body_bytes: 2048
"""
DASHBOARD = ["/dashboard", "/dashboard/agents/sim_a", "/dashboard/deliberations",
             "/dashboard/deliberations/new", "/dashboard/routing",
             "/dashboard/traffic"]  # fmt: skip
DOCS = ["/docs", "/redoc", "/docs/oauth2-redirect"]
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)([^>]*)>(.*?)</script>", re.DOTALL)


def _policy(answer: httpx.Response) -> dict[str, str]:
    """The CSP's directives by name."""
    directives = [d.strip() for d in answer.headers["content-security-policy"].split(";")]
    return {d.split(" ", 1)[0]: d.partition(" ")[2] for d in directives if d}


def _framing(answer: httpx.Response) -> None:
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["x-frame-options"] == "DENY"
    assert answer.headers["referrer-policy"] == "same-origin"
    assert _policy(answer)["frame-ancestors"] == "'none'"


def test_every_page_has_a_policy_and_no_inline_script(tmp_path: Path) -> None:
    """The dashboard's pages (one deliberation's too): a CSP whose script-src and
    style-src are 'self' alone, and a body with no inline script but JSON data and no
    style attribute; the docs pages: each inline script allowed by its exact hash."""
    server = start_server(tmp_path, CONFIG)
    try:
        deliberation = server.deliberate(["sim_a", "sim_b"])
        server.settled(deliberation)
        with httpx.Client(timeout=10) as client:
            for path in [*DASHBOARD, f"/dashboard/deliberations/{deliberation}"]:
                page = client.get(server.url(path))
                assert page.status_code == 200, path
                _framing(page)
                policy = _policy(page)
                assert policy["script-src"] == policy["style-src"] == "'self'", path
                assert policy["object-src"] == policy["base-uri"] == "'none'"
                for attributes, _ in INLINE_SCRIPT.findall(page.text):
                    assert 'type="application/json"' in attributes, (path, attributes)
                assert " style=" not in page.text, path
            for path in DOCS:
                page = client.get(server.url(path))
                assert page.status_code == 200, path
                _framing(page)
                allowed = _policy(page)["script-src"].split()
                for _, script in INLINE_SCRIPT.findall(page.text):
                    digest = base64.b64encode(hashlib.sha256(script.encode()).digest())
                    assert f"'sha256-{digest.decode()}'" in allowed, path
                assert "'unsafe-inline'" not in allowed
                assert "'unsafe-eval'" not in allowed
    finally:
        server.stop()


def test_every_response_says_nosniff(tmp_path: Path) -> None:
    """JSON, Prometheus text, a static script, a 404, the guard's 401, 413 and 415 and the
    host guard's 400: each carries nosniff, DENY, the Referrer-Policy and, not being a
    page, the policy that lets nothing load."""
    server = start_server(tmp_path, CONFIG)
    try:
        judgment = server.url("/oracle/judgments")
        with httpx.Client(timeout=10) as client:
            answers = {
                "json": client.get(server.url("/healthz")),
                "openapi": client.get(server.url("/openapi.json")),
                "metrics": client.get(server.url("/metrics")),
                "static": client.get(server.url("/static/dashboard.js")),
                "404": client.get(server.url("/nowhere")),
                "401": client.post(judgment, json={}, headers={"x-forwarded-for": "10.0.0.1"}),
                "413": client.post(judgment, json={"x": "a" * 4096}),
                "415": client.post(judgment, content=b"x", headers={"content-type": "text/plain"}),
                "400": client.get(server.url("/healthz"), headers={"host": "evil.example"}),
            }
        for name, answer in answers.items():
            assert answer.status_code == (int(name) if name.isdigit() else 200), name
            _framing(answer)
            assert _policy(answer)["default-src"] == "'none'", name
    finally:
        server.stop()
