"""Fair shares of a served instance (a real ``agentladder serve`` before the local
providers): one client's held bodies leave room for a judge's writes, a client past its
requests in flight or its rate is answered 429 while another is served."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from tests.gateway.provider import Providers
from tests.served import Server, start_server

CLIENT_A = "share-client-a-0123456789"
CLIENT_B = "share-client-b-0123456789"
SLOW = "share-client-slow-0123456789"
SLOW_API = "share-client-slow-api-0123456789"
JUDGE = "share-judge-token-0123456789"
MIB = 1024 * 1024


def _config(base_url: str) -> str:
    """Default shares; client A may hold 2 requests in flight, SLOW and SLOW_API 1 request
    each 5 s with a burst of 3 (each its own: a test apiece)."""
    return f"""
api:
  tokens:
    - {{role: client, token: {CLIENT_A}, name: team-a, max_in_flight: 2}}
    - {{role: client, token: {CLIENT_B}, name: team-b}}
    - {{role: client, token: {SLOW}, name: team-slow, rate_per_s: 0.2, burst: 3}}
    - {{role: client, token: {SLOW_API}, name: team-slow-api, rate_per_s: 0.2, burst: 3}}
    - {{role: orchestrator, token: {JUDGE}}}
gateway:
  models:
    smart: {{task_type: audit}}
agents:
  - name: good
    backend: {{kind: openai, base_url: "{base_url}", model: "good:good"}}
  - name: held
    backend: {{kind: openai, base_url: "{base_url}", model: "sharehold:30"}}
  - name: sim
    backend: {{kind: simulated, quality: 7.0}}
"""


def _served(folder: Path, providers: Providers) -> Iterator[Server]:
    """`agentladder serve` before the providers, stopped by its pid."""
    server = start_server(folder, _config(providers.base_url))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def served(tmp_path: Path, providers: Providers) -> Iterator[Server]:
    """A server for this test alone: for one that fills the server's whole body buffer."""
    yield from _served(tmp_path, providers)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory, providers: Providers) -> Iterator[Server]:
    """One server for the tests whose bounds are their own tokens' (each test its own
    tokens): a start costs seconds."""
    yield from _served(tmp_path_factory.mktemp("shares"), providers)


def _port(server: Server) -> int:
    return int(server.base.rsplit(":", 1)[1])


def _unfinished(server: Server, token: str, sent: int) -> socket.socket:
    """A connection sending ``sent`` bytes of a chat's body declared 16 MiB, then stopping."""
    head = (f"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer"
            f" {token}\r\ncontent-type: application/json\r\ncontent-length: {16 * MIB}"
            "\r\n\r\n").encode()  # fmt: skip
    start = b'{"model": "good", "x": "'
    sock = socket.create_connection(("127.0.0.1", _port(server)), timeout=20)
    sock.sendall(head + start + b"a" * (sent - len(start)))
    return sock


def _answer(sock: socket.socket) -> tuple[int, dict[str, str], dict[str, object]]:
    """The status, headers and JSON body the server answered on ``sock``, until it closed."""
    got = b""
    while chunk := sock.recv(65536):
        got += chunk
    head, _, body = got.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    return int(lines[0].split(" ")[1]), headers, json.loads(body)


def _held(sock: socket.socket) -> bool:
    """Whether the server still holds ``sock`` open, unanswered."""
    sock.setblocking(False)
    try:
        sock.recv(1)  # an answer's first byte, or b"" once closed
    except BlockingIOError:
        return True
    finally:
        sock.setblocking(True)
    return False


def _share_reached(server: Server, token: str, code: str) -> bool:
    """Send small whole bodies as ``token`` (at most 15, 0.2 s apart) until one is refused
    with ``code``: the bytes sent before are then all counted by the server."""
    for _ in range(15):
        answer = httpx.post(
            server.url("/v1/chat/completions"), content=b"{}", timeout=10,
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )  # fmt: skip
        if answer.status_code in (429, 503) and answer.json()["error"]["code"] == code:
            return True
        time.sleep(0.2)
    return False


def test_held_gateway_bodies_leave_room_for_a_judges_writes(served: Server) -> None:
    """One client's held 16 MiB bodies leave room: a judge's 100 judgments all succeed."""
    first = _unfinished(served, CLIENT_A, 16 * MIB - 1)
    held = [first]
    try:
        assert _share_reached(served, CLIENT_A, "rate_limit_exceeded")
        second = _unfinished(served, CLIENT_A, 30)
        status, headers, body = _answer(second)
        second.close()
        assert status == 429
        assert headers["retry-after"] == "1"
        error = body["error"]
        assert isinstance(error, dict)
        assert (error["type"], error["code"]) == ("rate_limit_error", "rate_limit_exceeded")
        assert "api.max_buffered_share_per_token" in error["message"]
        held.append(_unfinished(served, CLIENT_B, 8 * MIB + 1))  # the client role: 24 MiB
        assert _share_reached(served, CLIENT_B, "busy")
        statuses = []
        with httpx.Client(headers={"Authorization": f"Bearer {JUDGE}"}, timeout=10) as judge:
            for n in range(100):
                judgment = {"agent_id": "sim", "contract_id": f"share-{n}",
                            "task_type": "audit", "score": 8.0}  # fmt: skip
                statuses.append(judge.post(served.url("/oracle/judgments"), json=judgment))
        assert [answer.status_code for answer in statuses] == [200] * 100
        assert all(_held(sock) for sock in held)
    finally:
        for sock in held:
            sock.close()


def test_a_client_past_its_requests_in_flight_is_429_while_another_is_served(
    shared: Server,
) -> None:
    """A client past its in-flight bound gets 429 with Retry-After; another is served."""
    chat = {"model": "held", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    url = shared.url("/v1/chat/completions")
    with httpx.Client(timeout=20, headers={"Authorization": f"Bearer {CLIENT_A}"}) as a:
        with contextlib.ExitStack() as streams:
            reading = []  # kept: an iterator dropped closes its stream
            for _ in range(2):
                stream = streams.enter_context(a.stream("POST", url, json=chat))
                assert stream.status_code == 200
                reading.append(stream.iter_lines())
                assert next(reading[-1]).startswith("data: ")  # in flight now
            third = a.post(url, json={**chat, "stream": False, "model": "good"})
            assert third.status_code == 429
            assert third.headers["retry-after"] == "1"
            assert third.json()["error"]["code"] == "rate_limit_exceeded"
            assert third.json()["error"]["type"] == "rate_limit_error"
            assert "max_in_flight 2" in third.json()["error"]["message"]
            with openai.OpenAI(base_url=shared.url("/v1"), api_key=CLIENT_B, max_retries=0) as b:
                answer = b.chat.completions.create(
                    model="good", messages=[{"role": "user", "content": "hi"}]
                )
            assert answer.choices[0].message.content == "answer from good"
        statuses = []
        for _ in range(50):  # the server sees the closed streams' connections go
            statuses.append(a.post(url, json={**chat, "stream": False, "model": "good"}))
            if statuses[-1].status_code == 200:
                break
            time.sleep(0.1)
        assert statuses[-1].status_code == 200, [s.text for s in statuses]


def test_a_client_past_its_rate_gets_openais_rate_limit_error(shared: Server) -> None:
    """Past its rate a client gets 429 and the headers: OpenAI's client raises RateLimitError."""
    messages: list[openai.types.chat.ChatCompletionMessageParam] = [
        {"role": "user", "content": "hi"}
    ]
    with openai.OpenAI(base_url=shared.url("/v1"), api_key=SLOW, max_retries=0) as client:
        remaining = []
        for _ in range(3):
            raw = client.chat.completions.with_raw_response.create(model="good", messages=messages)
            assert raw.headers["x-ratelimit-limit-requests"] == "3"
            remaining.append(raw.headers["x-ratelimit-remaining-requests"])
        assert remaining == ["2", "1", "0"]
        with pytest.raises(openai.RateLimitError) as refused:
            client.chat.completions.create(model="good", messages=messages)
    headers = refused.value.response.headers
    assert 1 <= int(headers["retry-after"]) <= 5
    assert headers["x-ratelimit-limit-requests"] == "3"
    assert headers["x-ratelimit-remaining-requests"] == "0"
    assert re.fullmatch(r"\d+(\.\d+)?s", headers["x-ratelimit-reset-requests"])
    assert refused.value.code == "rate_limit_exceeded"
    assert "rate_per_s" in refused.value.message


def test_the_rate_answers_in_the_apis_shape_outside_the_gateway(shared: Server) -> None:
    """Past its rate, a client's read of the API is 429 in agentladder's own shape."""
    with httpx.Client(timeout=10, headers={"Authorization": f"Bearer {SLOW_API}"}) as client:
        answers = [client.get(shared.url("/agents")) for _ in range(4)]
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    assert set(answers[3].json()["error"]) == {"code", "message"}
    assert answers[3].json()["error"]["code"] == "rate_limit_exceeded"
    assert 1 <= int(answers[3].headers["retry-after"]) <= 5
