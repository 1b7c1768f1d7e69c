"""DNS rebinding against a real `agentladder serve` on loopback: a request whose ``Host``
is a foreign name, sent to 127.0.0.1, is refused 400 before routing (before: a write from
a rebound page was accepted as loopback's, +XP); a write whose ``Origin`` is a foreign
page is refused; the loopback names, the listening address and ``api.allowed_hosts``
are answered."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from agentladder.config import parse_settings
from agentladder.errors import InvalidInput
from tests.served import Server, start_server

OPEN = """
agents:
  - name: sim_a
    backend: {kind: simulated, quality: 7.0}
"""
LISTED = OPEN + "api:\n  allowed_hosts: [agentladder.internal, .corp.example]\n"


def _judge(server: Server, contract: str, headers: dict[str, str]) -> httpx.Response:
    body = {"agent_id": "sim_a", "contract_id": contract, "score": 9.5}
    return httpx.post(server.url("/oracle/judgments"), json=body, headers=headers, timeout=10)


def _xp(server: Server) -> int:
    xp: int = httpx.get(server.url("/oracle/profiles/sim_a"), timeout=10).json()["xp"]
    return xp


def _refusals(server: Server, reason: str) -> float:
    text = httpx.get(server.url("/metrics"), timeout=10).text
    found = re.search(rf'agentladder_refusals_total{{reason="{reason}"}} ([0-9.]+)', text)
    return float(found.group(1)) if found else 0.0


def test_a_rebinding_request_is_refused_before_routing(tmp_path: Path) -> None:
    """No tokens (loopback writes allowed): a judgment sent to 127.0.0.1 with the Host of a
    foreign name (with and without a port) is 400 host_not_allowed in the one error shape,
    nothing stored, counted; so is a page read; the same judgment with the Host 127.0.0.1,
    localhost or [::1] is accepted."""
    server = start_server(tmp_path, OPEN)
    try:
        port = server.base.rsplit(":", 1)[1]
        for host in (f"rebind.example:{port}", "rebind.example", "127.0.0.1.nip.io"):
            refused = _judge(server, "c-rebound", {"host": host})
            assert refused.status_code == 400, refused.text
            error = refused.json()["error"]
            assert error["code"] == "host_not_allowed"
            assert host in error["message"]
            assert "api.allowed_hosts" in error["message"]
            page = httpx.get(server.url("/dashboard"), headers={"host": host}, timeout=10)
            assert page.status_code == 400
        assert _xp(server) == 0
        assert _refusals(server, "host_not_allowed") == 6
        for n, host in enumerate((f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}")):
            accepted = _judge(server, f"c-{n}", {"host": host})
            assert accepted.status_code == 200, accepted.text
        assert _xp(server) > 0
    finally:
        output = server.stop()
    assert "host_not_allowed" in output


def test_a_write_from_a_foreign_page_is_refused(tmp_path: Path) -> None:
    """A write carrying the Origin of another site (or ``null``) is 400 origin_not_allowed
    and stores nothing; from the server's own page it is accepted; a read with a foreign
    Origin is answered (no CORS header lets the page read it)."""
    server = start_server(tmp_path, OPEN)
    try:
        for origin in ("http://evil.example", "null", "http://evil.example:8000"):
            refused = _judge(server, "c-cross", {"origin": origin})
            assert refused.status_code == 400, refused.text
            assert refused.json()["error"]["code"] == "origin_not_allowed"
        assert _xp(server) == 0
        read = httpx.get(server.url("/healthz"), headers={"origin": "http://evil.example"})
        assert read.status_code == 200
        assert "access-control-allow-origin" not in read.headers
        own = _judge(server, "c-own", {"origin": server.base})
        assert own.status_code == 200, own.text
    finally:
        server.stop()


def test_allowed_hosts_extends_the_list(tmp_path: Path) -> None:
    """``api.allowed_hosts``: a listed name and any name under a listed ``.domain`` are
    answered, a name that only ends like it is not."""
    server = start_server(tmp_path, LISTED)
    try:
        for host in ("agentladder.internal:8000", "AgentLadder.Internal.", "corp.example",
                     "a.b.corp.example"):  # fmt: skip
            answer = httpx.get(server.url("/healthz"), headers={"host": host}, timeout=10)
            assert answer.status_code == 200, host
        for host in ("evilcorp.example", "agentladder.internal.evil.example"):
            answer = httpx.get(server.url("/healthz"), headers={"host": host}, timeout=10)
            assert answer.status_code == 400, host
    finally:
        server.stop()


def test_the_listening_address_decides_which_addresses_are_allowed() -> None:
    """A specific address allows itself (and loopback), not another; a wildcard (0.0.0.0,
    ::) allows any IP literal but no name; ``*`` allows anything."""
    from agentladder.api.hosts import AllowedHosts

    specific = AllowedHosts.of((), "192.0.2.5")
    assert specific.allows("192.0.2.5")
    assert specific.allows("127.0.0.1")
    assert specific.allows("::1")
    assert specific.allows("localhost")
    assert not specific.allows("192.0.2.6")
    assert not specific.allows("evil.example")
    for wildcard in ("0.0.0.0", "::", "[::]"):
        every = AllowedHosts.of((), wildcard)
        assert every.allows("192.0.2.77")
        assert every.allows("2001:db8::1")
        assert not every.allows("evil.example")
    assert AllowedHosts.of(("*",), "127.0.0.1").allows("evil.example")
    assert AllowedHosts.of(("[2001:db8::1]",)).allows("2001:db8::1")


@pytest.mark.parametrize(
    ("header", "host"),
    [
        ("localhost:8000", "localhost"),
        ("[::1]:8000", "::1"),
        ("[0:0:0:0:0:0:0:1]", "::1"),
        ("Example.COM.", "example.com"),
        ("a b", None),
        ("[::1", None),
        ("x:y", None),
        ("évil.example", None),
        ("user@evil.example", None),
    ],
)
def test_host_headers_parse_to_one_host(header: str, host: str | None) -> None:
    """Ports, brackets, case and a final dot are read away; what is no host is None."""
    from agentladder.api.hosts import host_of

    assert host_of(header) == host


def test_a_bad_allowed_hosts_entry_is_refused() -> None:
    """A scheme, a port or a path in ``api.allowed_hosts`` is a config error naming it."""
    for entry in ("http://a.example", "a.example:8000", "a.example/x", ""):
        with pytest.raises(InvalidInput, match=r"api\.allowed_hosts.*is not a host name"):
            parse_settings({"api": {"allowed_hosts": [entry]}})
