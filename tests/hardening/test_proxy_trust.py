"""Proxy headers against a real `agentladder serve` on loopback: believed only from
``api.trusted_proxies``, never making a client loopback, and open-loopback mode refusing
to start behind a trusted proxy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.served import free_port, start_server

OPEN = """
agents:
  - name: sim_a
    backend: {kind: simulated, quality: 7.0}
"""
ADMIN = "proxy-admin-token-0123456789"
JUDGMENT = {"agent_id": "sim_a", "contract_id": "c-proxy", "score": 8.0}


@pytest.mark.parametrize("claimed", ["127.0.0.1", "::1", "localhost", "testclient"])
def test_open_loopback_does_not_trust_a_forwarded_loopback_address(
    tmp_path: Path, claimed: str
) -> None:
    """With no tokens, a write carrying X-Forwarded-For (a loopback address or name) is
    refused 401 and stores nothing; the same write without it is accepted."""
    server = start_server(tmp_path, OPEN)
    try:
        forwarded = httpx.post(
            server.url("/oracle/judgments"), json=JUDGMENT,
            headers={"x-forwarded-for": claimed}, timeout=10,
        )  # fmt: skip
        assert forwarded.status_code == 401, forwarded.text
        assert httpx.get(server.url("/oracle/profiles/sim_a"), timeout=10).json()["xp"] == 0
        direct = httpx.post(server.url("/oracle/judgments"), json=JUDGMENT, timeout=10)
        assert direct.status_code == 200, direct.text
    finally:
        server.stop()


def test_proxy_headers_are_believed_only_from_trusted_proxies(tmp_path: Path) -> None:
    """X-Forwarded-For is ignored by default (the access log shows the loopback peer) and
    believed from a proxy in ``api.trusted_proxies`` (the log shows the forwarded client)."""
    tokens = f"api:\n  tokens:\n    - {{role: admin, token: {ADMIN}}}\n"
    cases = (("", "127.0.0.1:"), ("  trusted_proxies: [127.0.0.1]\n", "203.0.113.7:"))
    for trusted, shown in cases:
        folder = tmp_path / str(len(trusted))
        folder.mkdir()
        server = start_server(folder, OPEN + tokens + trusted)
        try:
            answer = httpx.get(
                server.url("/healthz"), headers={"x-forwarded-for": "203.0.113.7"}, timeout=10
            )
            assert answer.status_code == 200
        finally:
            output = server.stop()
        line = next(x for x in output.splitlines() if "GET /healthz" in x)
        assert shown in line, line


def test_open_loopback_refuses_to_start_with_trusted_proxies(tmp_path: Path) -> None:
    """``api.trusted_proxies`` without tokens: serve exits 1 with one line naming the key."""
    path = tmp_path / "agents.yaml"
    path.write_text(OPEN + "api: {trusted_proxies: [127.0.0.1]}\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "agentladder.cli", "serve", "--config", str(path),
         "--db", str(tmp_path / "x.db"), "--port", str(free_port())],
        check=False, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "api.trusted_proxies" in done.stdout
    assert "needs api.tokens" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr
    assert not (tmp_path / "x.db").exists()


def test_only_loopback_ip_literals_without_proxy_headers_are_loopback() -> None:
    """``localhost`` and ``testclient`` are names, not loopback; a proxy header voids it."""
    from agentladder.api.auth import loopback_client

    assert loopback_client(("127.0.0.1", 1), [])
    assert loopback_client(("::1", 1), [])
    assert not loopback_client(("localhost", 1), [])
    assert not loopback_client(("testclient", 1), [])
    assert not loopback_client(("127.0.0.1", 1), [(b"forwarded", b"for=127.0.0.1")])
    assert not loopback_client(None, [])


def test_the_access_log_is_written_unless_turned_off(tmp_path: Path) -> None:
    """A request's line (method, path, status) is on the server's output by default and
    not with ``api.access_log: false``; the request is answered either way."""
    for setting, logged in (("", True), ("api:\n  access_log: false\n", False)):
        folder = tmp_path / str(logged)
        folder.mkdir()
        server = start_server(folder, OPEN + setting)
        try:
            assert httpx.get(server.url("/healthz"), timeout=10).status_code == 200
        finally:
            output = server.stop()
        lines = [x for x in output.splitlines() if "GET /healthz" in x]
        assert bool(lines) is logged, output[-2000:]
        if logged:
            assert '"GET /healthz HTTP/1.1" 200' in lines[0], lines
