"""Unfinished bodies and slow clients against a real `agentladder serve` on loopback:
writes authenticated before their body is read, bodies and headers given a time, the
bytes buffered for all requests capped, connections capped; the server's resident memory
and descriptors measured from /proc."""

from __future__ import annotations

import contextlib
import socket
import time
from pathlib import Path

import httpx

from tests.served import Server, start_server

ADMIN = "limits-admin-token-0123456789"
MIB = 1024 * 1024
CONFIG = f"""
agents:
  - name: sim_a
    backend: {{kind: simulated, quality: 7.0}}
api:
  body_timeout_s: 2
  header_timeout_s: 2
  max_connections: 200
  tokens:
    - {{role: admin, token: {ADMIN}}}
"""


def _proc(server: Server, field: str) -> int:
    for line in Path(f"/proc/{server.process.pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(field)


def _rss_mb(server: Server) -> float:
    return _proc(server, "VmRSS") / 1024


def _descriptors(server: Server) -> int:
    return len(list(Path(f"/proc/{server.process.pid}/fd").iterdir()))


def _port(server: Server) -> int:
    return int(server.base.rsplit(":", 1)[1])


def _stall(server: Server, count: int, token: str | None) -> list[socket.socket]:
    """``count`` connections each sending ~0.94 MiB of a declared 1 MiB body, then
    stopping (as much as the kernel takes without blocking)."""
    auth = f"authorization: Bearer {token}\r\n" if token else ""
    head = (f"POST /oracle/judgments HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json"
            f"\r\ncontent-length: {MIB}\r\n{auth}\r\n").encode()  # fmt: skip
    body = b'{"agent_id": "' + b"a" * (MIB * 94 // 100)
    sockets = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", _port(server)), timeout=5)
        sock.setblocking(False)
        with contextlib.suppress(OSError):
            sock.send(head + body)
        sockets.append(sock)
    return sockets


def _closed(sock: socket.socket, seen: dict[socket.socket, bytes]) -> tuple[bool, bytes]:
    """Whether the server closed ``sock`` (its answer read up to the end), and the answer
    (the bytes read by earlier calls, kept in ``seen``, included)."""
    sock.setblocking(False)
    got = seen.get(sock, b"")
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return True, got
            got += chunk
    except BlockingIOError:
        seen[sock] = got
        return False, got
    except ConnectionResetError:
        return True, got


def _status(answer: bytes) -> int | None:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else None


def test_unfinished_bodies_do_not_exhaust_memory(tmp_path: Path) -> None:
    """400 connections stall in a 1 MiB body, without a token then with one: without, each
    is refused 401 and closed at once; with, each is closed within the body time (408) or
    at once past the token's share of the buffered bytes (429) or the budget (503);
    resident memory grows under 50 MB and a normal request is answered meanwhile."""
    server = start_server(tmp_path, CONFIG.replace("max_connections: 200", "max_connections: 1000"))
    try:
        httpx.get(server.url("/agents"), timeout=10)
        before = _rss_mb(server)
        figures = {}
        for token in (None, ADMIN):
            sockets = _stall(server, 200, token) + _stall(server, 200, token)
            time.sleep(0.5)
            assert httpx.get(server.url("/healthz"), timeout=10).status_code == 200
            peak = _rss_mb(server)
            deadline = time.monotonic() + 2 + 3  # the body time and a margin
            answers: dict[int | None, int] = {}
            seen: dict[socket.socket, bytes] = {}
            while sockets and time.monotonic() < deadline:
                for sock in list(sockets):
                    done, answer = _closed(sock, seen)
                    if done:
                        answers[_status(answer)] = answers.get(_status(answer), 0) + 1
                        sock.close()
                        sockets.remove(sock)
                time.sleep(0.1)
            left = len(sockets)
            for sock in sockets:
                sock.close()
            figures[token] = (peak - before, answers, left)
            assert left == 0, figures
            assert peak - before < 50, figures
        assert figures[None][1] == {401: 400}, figures
        assert set(figures[ADMIN][1]) <= {408, 429, 503, None}, figures
        print(f"rss before {before:.0f} MB; added, answers: {figures}")
    finally:
        server.stop()


def test_slow_clients_are_disconnected_and_connections_capped(tmp_path: Path) -> None:
    """300 connections trickling a byte every 0.5 s, half in their headers and half in
    their body, with room for 200: the ones past 200 are refused 503 at once, the others
    408 within the header or body time (or 400 once a trickled header line is complete and
    invalid); then the descriptors are back and requests are
    answered."""
    server = start_server(tmp_path, CONFIG)
    try:
        baseline = _descriptors(server)
        heads = b"POST /oracle/judgments HTTP/1.1\r\nhost: 127.0.0.1\r\n"
        bodies = (f"POST /oracle/judgments HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer"
                  f" {ADMIN}\r\ncontent-type: application/json\r\ncontent-length: 1000"
                  "\r\n\r\n{").encode()  # fmt: skip
        sockets = []
        for n in range(300):
            sock = socket.create_connection(("127.0.0.1", _port(server)), timeout=5)
            sock.sendall(heads if n % 2 else bodies)
            sock.setblocking(False)
            sockets.append(sock)
        peak = _descriptors(server)
        answers: dict[int | None, int] = {}
        seen: dict[socket.socket, bytes] = {}
        deadline = time.monotonic() + 2 + 4
        while sockets and time.monotonic() < deadline:
            for sock in list(sockets):
                done, answer = _closed(sock, seen)
                if done:
                    answers[_status(answer)] = answers.get(_status(answer), 0) + 1
                    sock.close()
                    sockets.remove(sock)
                else:
                    with contextlib.suppress(OSError):
                        sock.send(b"x")
            time.sleep(0.5)
        left = len(sockets)
        for sock in sockets:
            sock.close()
        time.sleep(0.5)
        after = _descriptors(server)
        print(f"descriptors {baseline} -> {peak} -> {after}; answers {answers}; left {left}")
        assert left == 0, answers
        assert sum(answers.values()) == 300, answers
        assert answers.get(503, 0) >= 90, answers  # past the cap of 200, at once
        assert set(answers) <= {400, 408, 503}, answers  # 400: a trickled header line
        assert after <= baseline + 5
        assert httpx.get(server.url("/healthz"), timeout=10).status_code == 200
    finally:
        server.stop()
