"""Hostile input against a real `agentladder serve` on loopback: what only bytes can say.

10 MB bodies with and without a Content-Length (chunked), invalid UTF-8, 100,000 levels of
``[``, a body cut short: each gets its 4xx in the one error shape and the server goes on
answering. Then the whole in-process corpus again over real HTTP. Nothing is stored: the
agents, stats, profiles, leaderboard and deliberations read over HTTP are the same after.
"""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from tests.api.test_hostile_corpus import ADMIN_WRITES, ENDPOINTS, check_response, corpus
from tests.served import Server, start_server

ADMIN = "served-admin-token-0123456789"
ORCH = "served-orchestrator-token-0123456789"
AGENT = "served-agent-token-0123456789"
CONFIG = f"""
agents:
  - name: sim_a
    backend: {{kind: simulated, quality: 7.0}}
  - name: sim_b
    backend: {{kind: simulated, quality: 9.0}}
api:
  tokens:
    - {{role: admin, token: {ADMIN}}}
    - {{role: orchestrator, token: {ORCH}}}
    - {{role: agent, token: {AGENT}, agent_id: sim_a}}
"""
TEN_MB = 10 * 1024 * 1024
WRITES = [e.target for e in ENDPOINTS]


def _auth(path: str) -> dict[str, str]:
    token = ADMIN if path in ADMIN_WRITES else ORCH
    return {"authorization": f"Bearer {token}", "content-type": "application/json"}


def state(server: Server) -> dict[str, Any]:
    """Everything stored, read over HTTP (heartbeat times and status left out)."""
    admin = {"authorization": f"Bearer {ADMIN}"}
    agents = httpx.get(server.url("/agents"), timeout=10).json()["agents"]
    for agent in agents:
        for moving in ("first_seen", "last_seen", "status"):
            agent.pop(moving)
    profiles = {
        name: httpx.get(server.url(f"/oracle/profiles/{name}"), timeout=10).json()
        for name in ("sim_a", "sim_b", "ghost")
    }
    return {
        "agents": agents,
        "stats": httpx.get(server.url("/admin/api/agents/stats"), headers=admin).json(),
        "profiles": profiles,
        "board": httpx.get(server.url("/oracle/leaderboard?limit=1000"), timeout=10).json(),
        "deliberations": httpx.get(server.url("/deliberations?limit=1000"), timeout=10).json(),
    }


def _chunks(total: int, size: int = 64 * 1024) -> Iterator[bytes]:
    """A JSON-looking body of ``total`` bytes, sent chunked (no Content-Length)."""
    yield b'{"name": "sim_a", "description": "'
    sent = 0
    while sent < total:
        yield b"a" * size
        sent += size
    yield b'"}'


def _cut_short(server: Server, path: str) -> bytes:
    """A request whose body stops halfway through its Content-Length, then the close."""
    port = int(server.base.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        headers = "".join(f"{k}: {v}\r\n" for k, v in _auth(path).items())
        sock.sendall(
            f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\n{headers}"  # an allowed Host
            "content-length: 1000\r\n\r\n".encode()
            + b'{"name": "sim_a", "desc'
        )
        sock.shutdown(socket.SHUT_WR)
        return sock.recv(65536)


def test_byte_level_hostile_bodies_on_every_write_endpoint(tmp_path: Path) -> None:
    """413, 400, 422 on every write endpoint of a served instance; it keeps answering."""
    server = start_server(tmp_path, CONFIG, db="hostile.db")
    problems: list[str] = []
    statuses: dict[int, int] = {}
    try:
        before = state(server)
        for path in WRITES:
            cases: list[tuple[str, dict[str, Any], int, str]] = [
                ("10 MB with a length", {"content": b"{" + b" " * TEN_MB + b"}"}, 413,
                 "payload_too_large"),
                ("10 MB chunked", {"content": _chunks(TEN_MB)}, 413, "payload_too_large"),
                ("2 MB chunked", {"content": _chunks(2 * 1024 * 1024)}, 413,
                 "payload_too_large"),
                ("invalid UTF-8", {"content": b'{"name": "\xff\xfe\xc3\x28"}'}, 400,
                 "bad_request"),
                ("100,000 levels of [", {"content": b"[" * 100_000}, 400, "bad_request"),
                ("100,000 levels, chunked", {"content": iter([b"[" * 50_000] * 2)}, 400,
                 "bad_request"),
                ("100 levels in a field", {"content": b'{"a": ' + b"[" * 100 + b"]" * 100
                                           + b"}"}, 400, "bad_request"),
            ]  # fmt: skip
            for what, request, status, code in cases:
                response = httpx.post(server.url(path), headers=_auth(path), timeout=30, **request)
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
                if response.status_code != status or response.json()["error"]["code"] != code:
                    problems.append(f"{what} {path}: {response.status_code} {response.text:.200}")
            answer = _cut_short(server, path)
            if answer and not answer.startswith(b"HTTP/1.1 4"):
                problems.append(f"cut short {path}: {answer[:200]!r}")
        assert httpx.get(server.url("/healthz"), timeout=10).status_code == 200
        metrics = httpx.get(server.url("/metrics"), timeout=10).text
        after = state(server)
    finally:
        output = server.stop()
    assert problems == [], "\n".join(problems)
    assert after == before
    assert statuses == {413: 3 * len(WRITES), 400: 4 * len(WRITES)}
    counted = re.search(r'route="unmatched",status="413"\} ([0-9.]+)', metrics)
    assert counted is not None
    assert float(counted.group(1)) == 3 * len(WRITES)
    assert "Traceback" not in output


def test_the_whole_corpus_over_real_http(tmp_path: Path) -> None:
    """Every case of the in-process corpus against the served instance: same answers."""
    server = start_server(tmp_path, CONFIG, db="corpus.db")
    problems: list[str] = []
    total = 0
    try:
        seeded = httpx.post(
            server.url("/oracle/judgments"), headers=_auth("/oracle/judgments"),
            json={"agent_id": "sim_a", "contract_id": "seed-1", "score": 9.0},
        )  # fmt: skip
        assert seeded.status_code == 200, seeded.text
        before = state(server)
        with httpx.Client(base_url=server.base, timeout=30) as client:
            for endpoint in ENDPOINTS:
                for case in corpus(endpoint):
                    if case.kind == "conflict" and case.path == "/deliberations/results":
                        continue  # its seed is the in-process test's
                    headers = {**_auth(case.path), "content-type": case.content_type}
                    try:
                        response = client.post(case.path, content=case.body, headers=headers)
                    except httpx.TransportError as error:  # name the case and show the log
                        log = server.output()
                        raise AssertionError(
                            f"{case.label} ({case.path}, {len(case.body)} bytes, after"
                            f" {total} cases): {error!r}; the server's log ends:\n{log[-3000:]}"
                        ) from error
                    total += 1
                    try:
                        body = response.json()
                    except ValueError:
                        body = response.text
                    found = check_response(case, response.status_code, body, len(response.content))
                    problems.extend(f"{case.label}: {p}" for p in found)
        time.sleep(0.2)  # anything wrongly accepted would be settling now
        after = state(server)
    finally:
        output = server.stop()
    assert problems == [], "\n".join(problems[:40])
    assert total >= 500
    assert after == before
    assert "Traceback" not in output


def served_refusals(folder: Path) -> tuple[dict[str, float], str]:
    """Five refused attempts on a served instance: the refusals /metrics counts, the log."""
    server = start_server(folder, CONFIG, db="refusals.db")
    agent = {"authorization": f"Bearer {AGENT}"}
    judgment = {"agent_id": "sim_a", "contract_id": "c1", "score": 10}
    try:
        attempts = [
            ("/oracle/judgments", judgment, agent, 403),
            ("/oracle/judgments", judgment, {}, 401),
            ("/oracle/judgments", judgment, {"authorization": "Bearer forged-token-00000000"}, 401),
            ("/agents/heartbeat", {"name": "sim_a", "rank": 7}, agent, 422),
            ("/agents/heartbeat", {"name": "sim_b"}, agent, 403),
        ]
        for path, body, headers, status in attempts:
            response = httpx.post(server.url(path), json=body, headers=headers, timeout=10)
            assert response.status_code == status, response.text
        metrics = httpx.get(server.url("/metrics"), timeout=10).text
    finally:
        output = server.stop()
    found = re.findall(
        r'^agentladder_refusals_total\{reason="([a-z_]+)"\} ([0-9.e+]+)$', metrics, re.M
    )
    return {reason: float(count) for reason, count in found}, output
