"""The gateway as OpenAI's own client sees it: `agentladder serve` on loopback in front of
local OpenAI-compatible providers (``provider.py``; agents in ``conftest.py``)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from tests.gateway.conftest import CLIENT, KEYS, ORCH
from tests.gateway.provider import COMPLETION_TOKENS, PROMPT_TOKENS, Providers
from tests.served import Server

QUESTION = "Which controls matter most?"
ASK: list[ChatCompletionMessageParam] = [{"role": "user", "content": QUESTION}]
CONTRACT = re.compile(r"^gw-[0-9a-f]{32}$")


_OPEN: list[openai.OpenAI] = []


def client(server: Server, token: str = CLIENT) -> openai.OpenAI:
    """OpenAI's client on the gateway, without its own retries (each request is one);
    closed after the test."""
    made = openai.OpenAI(base_url=server.url("/v1"), api_key=token, max_retries=0, timeout=30)
    _OPEN.append(made)
    return made


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    """Every client a test made is closed after it (its pooled connections)."""
    yield
    while _OPEN:
        _OPEN.pop().close()


def metric(server: Server, line: str) -> float:
    """The value of a /metrics sample, 0 when absent."""
    for found in httpx.get(server.url("/metrics"), timeout=10).text.splitlines():
        if found.startswith(line + " "):
            return float(found.split()[-1])
    return 0.0


def agent(server: Server, name: str) -> dict[str, Any]:
    """``GET /agents/{name}``."""
    found: dict[str, Any] = httpx.get(server.url(f"/agents/{name}"), timeout=10).json()
    return found


def test_a_direct_agent_answers_unchanged_with_the_gateway_headers(
    shared_gateway: Server, providers: Providers
) -> None:
    """``model: alpha`` is forwarded to alpha's provider with alpha's model name and key;
    the answer comes back as the provider sent it, with the agent, a contract id and the
    check header."""
    before = len(providers.seen())
    raw = client(shared_gateway).chat.completions.with_raw_response.create(
        model="alpha",
        messages=ASK,
        user="u-1",
    )
    answer = raw.parse()
    assert answer.choices[0].message.content == "answer from alpha"
    assert answer.id == "chatcmpl-alpha"
    assert answer.usage is not None
    assert answer.usage.prompt_tokens == PROMPT_TOKENS
    assert raw.headers["x-agentladder-agent"] == "alpha"
    assert CONTRACT.match(raw.headers["x-agentladder-contract"])
    assert raw.headers["x-agentladder-check"] == "no"
    sent = providers.seen()[before:]
    assert len(sent) == 1
    assert sent[0]["model"] == "good:alpha"
    assert sent[0]["authorization"] == f"Bearer {KEYS['alpha']}"
    assert sent[0]["messages"] == ASK
    assert sent[0]["extra"] == "u-1"  # fields the gateway does not read pass unchanged


def test_a_direct_agent_streams_as_openai_clients_read_it(shared_gateway: Server) -> None:
    """``stream: true``: the client reads the deltas and the usage chunk it asked for."""
    pieces, usage = [], None
    stream = client(shared_gateway).chat.completions.create(
        model="alpha", messages=ASK, stream=True,
        stream_options={"include_usage": True},
    )  # fmt: skip
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            pieces.append(chunk.choices[0].delta.content)
        if chunk.usage is not None:
            usage = chunk.usage
    assert "".join(pieces) == "answer from alpha"
    assert usage is not None
    assert usage.completion_tokens == COMPLETION_TOKENS
    raw = httpx.post(
        shared_gateway.url("/v1/chat/completions"), headers={"Authorization": f"Bearer {CLIENT}"},
        json={"model": "alpha", "messages": ASK, "stream": True}, timeout=30,
    )  # fmt: skip
    assert raw.headers["content-type"].startswith("text/event-stream")
    assert raw.headers["x-agentladder-agent"] == "alpha"
    events = [line for line in raw.text.splitlines() if line]
    assert all(line.startswith("data: ") for line in events)
    assert events[-1] == "data: [DONE]"


def test_a_routed_request_falls_back_past_a_failing_and_a_slow_agent(
    gateway: Server, providers: Providers
) -> None:
    """``route:audit`` (best: beta, gamma, alpha): beta answers 500, gamma times out, alpha
    answers; the same streamed; each attempt is recorded (metrics, health, stats, tokens)."""
    before = len(providers.seen())
    raw = client(gateway).chat.completions.with_raw_response.create(
        model="route:audit",
        messages=ASK,
    )
    assert raw.parse().choices[0].message.content == "answer from alpha"
    assert raw.headers["x-agentladder-agent"] == "alpha"
    asked = [s["model"] for s in providers.seen()[before:]]
    assert asked == ["fail:beta", "slow:3000", "good:alpha"]
    pieces = [
        chunk.choices[0].delta.content or ""
        for chunk in client(gateway).chat.completions.create(
            model="route:audit",
            messages=ASK,
            stream=True,
        )
        if chunk.choices
    ]
    assert "".join(pieces) == "answer from alpha"
    errors = 'agentladder_provider_call_errors_total{agent="%s",call="chat",kind="%s"}'
    assert metric(gateway, errors % ("beta", "http")) == 2
    assert metric(gateway, errors % ("gamma", "timeout")) == 2
    calls = 'agentladder_provider_call_duration_seconds_count{agent="alpha",call="chat"}'
    assert metric(gateway, calls) == 2
    tokens = 'agentladder_provider_tokens_total{agent="alpha",direction="input"}'
    # the stream was asked for its usage (the caller was not): the provider's, both times
    assert metric(gateway, tokens) == 2 * PROMPT_TOKENS
    assert metric(gateway, 'agentladder_gateway_failed_attempts_total{agent="beta"}') == 2
    health = agent(gateway, "beta")["health"]
    assert (health["calls"], health["failed"]) == (2, 2)
    assert "answered 500" in health["last_error"]
    deadline = time.monotonic() + 10  # the stats are written off the request path
    while time.monotonic() < deadline and agent(gateway, "alpha")["stats"]["tasks_completed"] < 2:
        time.sleep(0.1)
    assert agent(gateway, "alpha")["stats"]["tasks_completed"] == 2
    assert agent(gateway, "gamma")["stats"]["tasks_failed"] == 2


def test_route_without_a_classifier_is_the_overall_skill_said_in_headers(
    gateway: Server, providers: Providers
) -> None:
    """``model: route`` with no ``gateway.classify``: no task type, routed at the overall
    skill (best: beta, gamma, alpha, as at audit, the only type judged); the answer says
    the strategy and no task type or classification. ``route:audit`` says its task type."""
    before = len(providers.seen())
    raw = client(gateway).chat.completions.with_raw_response.create(model="route", messages=ASK)
    assert raw.headers["x-agentladder-agent"] == "alpha"
    assert [s["model"] for s in providers.seen()[before:]] == [
        "fail:beta", "slow:3000", "good:alpha",
    ]  # fmt: skip
    assert raw.headers["x-agentladder-strategy"] == "best"
    assert "x-agentladder-task-type" not in raw.headers
    assert "x-agentladder-classified" not in raw.headers
    typed = client(gateway).chat.completions.with_raw_response.create(
        model="route:audit", messages=ASK
    )
    assert typed.headers["x-agentladder-task-type"] == "audit"
    assert "x-agentladder-quality-floor" not in typed.headers


def test_an_agent_whose_calls_keep_failing_is_down_and_left_out(gateway: Server) -> None:
    """Three failed calls in a row make beta down: the next routing leaves it out and
    the request goes to gamma first (the health of deliberation calls)."""
    for _ in range(3):
        client(gateway).chat.completions.create(model="route:audit", messages=ASK)
    assert agent(gateway, "beta")["health"]["status"] == "down"
    assert agent(gateway, "gamma")["health"]["status"] == "down"
    raw = client(gateway).chat.completions.with_raw_response.create(
        model="route:audit",
        messages=ASK,
    )
    assert raw.headers["x-agentladder-agent"] == "alpha"
    assert metric(gateway, 'agentladder_gateway_failed_attempts_total{agent="beta"}') == 3


def test_an_alias_and_a_tag_header_route_to_the_agent_that_qualifies(
    shared_gateway: Server, providers: Providers
) -> None:
    """``smart`` is ``route:audit``; with ``x-agentladder-tags: sql`` only alpha qualifies,
    and it is asked first (nobody failing is asked)."""
    before = len(providers.seen())
    raw = client(shared_gateway).chat.completions.with_raw_response.create(
        model="smart", messages=ASK,
        extra_headers={"x-agentladder-tags": "sql"},
    )  # fmt: skip
    assert raw.headers["x-agentladder-agent"] == "alpha"
    assert [s["model"] for s in providers.seen()[before:]] == ["good:alpha"]


def test_when_every_agent_tried_fails_the_answer_is_503_naming_them(gateway: Server) -> None:
    """``flaky`` (beta: 500, delta: 429 with Retry-After): 503 ``agents_failed`` naming
    both agents and why, in OpenAI's error shape; delta is down (its Retry-After)."""
    with pytest.raises(openai.InternalServerError) as raised:
        client(gateway).chat.completions.create(model="flaky", messages=ASK)
    assert raised.value.status_code == 503
    error = raised.value.body
    assert isinstance(error, dict)
    assert set(error) == {"message", "type", "param", "code"}
    assert error["code"] == "agents_failed"
    assert "beta: http: answered 500" in error["message"]
    assert "delta: http: answered 429" in error["message"]
    assert agent(gateway, "delta")["health"]["status"] == "down"
    assert metric(gateway, 'agentladder_gateway_unavailable_total{task_type="audit"}') == 1


def test_an_unknown_model_is_404_model_not_found(shared_gateway: Server) -> None:
    """An unknown model, a simulated agent and an unknown strategy: 404 naming the value."""
    for model, says in (
        ("nope", "names no agent"),
        ("sim", "cannot be asked through the gateway"),
        ("route:audit:fastest", "unknown strategy 'fastest'"),
    ):
        with pytest.raises(openai.NotFoundError) as raised:
            client(shared_gateway).chat.completions.create(model=model, messages=ASK)
        error = raised.value.body
        assert isinstance(error, dict)
        assert error["code"] == "model_not_found"
        assert error["param"] == "model"
        assert says in error["message"]
        assert repr(model) in error["message"]


def test_nobody_qualifying_is_400_with_every_reason(shared_gateway: Server) -> None:
    """A tag no agent declares: 400 ``no_agent_qualifies`` with each agent's reason."""
    with pytest.raises(openai.BadRequestError) as raised:
        client(shared_gateway).chat.completions.create(
            model="route:audit", messages=ASK,
            extra_headers={"x-agentladder-tags": "cobol"},
        )  # fmt: skip
    error = raised.value.body
    assert isinstance(error, dict)
    assert error["code"] == "no_agent_qualifies"
    assert "alpha (tags)" in error["message"]
    assert "beta (tags)" in error["message"]


def test_bad_input_is_400_naming_the_field_or_header(shared_gateway: Server) -> None:
    """No messages, a floor that is not a number, a body that is not JSON: 400 naming it."""
    bearer = {"Authorization": f"Bearer {CLIENT}"}
    url = shared_gateway.url("/v1/chat/completions")
    missing = httpx.post(url, headers=bearer, json={"model": "alpha"}, timeout=10)
    assert missing.status_code == 400
    assert missing.json()["error"]["param"] == "messages"
    floor = httpx.post(
        url, headers={**bearer, "x-agentladder-quality-floor": "high"},
        json={"model": "route:audit", "messages": ASK}, timeout=10,
    )  # fmt: skip
    assert floor.status_code == 400
    assert floor.json()["error"]["param"] == "x-agentladder-quality-floor"
    assert "'high'" in floor.json()["error"]["message"]
    garbage = httpx.post(
        url, headers={**bearer, "content-type": "application/json"}, content=b"{not json",
        timeout=10,
    )  # fmt: skip
    assert garbage.status_code == 400
    assert set(garbage.json()["error"]) == {"message", "type", "param", "code"}


def test_a_client_token_is_required(shared_gateway: Server) -> None:
    """No token: 401; an orchestrator token: 403; both in OpenAI's shape."""
    with pytest.raises(openai.AuthenticationError) as unauthenticated:
        client(shared_gateway, token="not-a-token-at-all").models.list()
    assert isinstance(unauthenticated.value.body, dict)
    assert unauthenticated.value.body["type"] == "authentication_error"
    bare = httpx.get(shared_gateway.url("/v1/models"), timeout=10)
    assert bare.status_code == 401
    assert set(bare.json()["error"]) == {"message", "type", "param", "code"}
    with pytest.raises(openai.PermissionDeniedError) as forbidden:
        client(shared_gateway, token=ORCH).chat.completions.create(model="alpha", messages=ASK)
    assert isinstance(forbidden.value.body, dict)
    assert forbidden.value.body["code"] == "forbidden"


def test_the_models_are_the_agents_aliases_and_route_forms(shared_gateway: Server) -> None:
    """``GET /v1/models``: the agents behind OpenAI-compatible backends, the aliases and
    route:audit (the aliases' task type); not the simulated agent."""
    ids = {model.id for model in client(shared_gateway).models.list()}
    assert ids == {"alpha", "beta", "gamma", "delta", "epsilon", "smart", "flaky", "route:audit"}


def test_a_stream_that_breaks_midway_ends_with_an_error_event(gateway: Server) -> None:
    """epsilon's stream breaks after its first piece (bytes went to the caller: no
    fallback): the client reads that piece, then an error; the call is a failed one."""
    pieces: list[str] = []
    stream = client(gateway).chat.completions.create(
        model="epsilon",
        messages=ASK,
        stream=True,
    )
    with pytest.raises(openai.APIError) as raised:
        pieces.extend(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert "".join(pieces) == "answer "
    assert "the agent's stream broke" in raised.value.message
    assert agent(gateway, "epsilon")["health"]["failed"] == 1
    broken = (
        'agentladder_gateway_requests_total{agent="epsilon",outcome="broken",task_type="general"}'
    )
    assert metric(gateway, broken) == 1


def test_a_direct_agent_is_not_asked_while_its_retry_after_runs(
    gateway: Server, providers: Providers
) -> None:
    """delta answers 429 with Retry-After 30: that request is 503 naming it; the next one
    is 503 too, without a call to its provider ("not asked ... Retry-After")."""
    with pytest.raises(openai.InternalServerError) as first:
        client(gateway).chat.completions.create(model="delta", messages=ASK)
    assert isinstance(first.value.body, dict)
    assert "delta: http: answered 429" in first.value.body["message"]
    before = len(providers.seen())
    with pytest.raises(openai.InternalServerError) as second:
        client(gateway).chat.completions.create(model="delta", messages=ASK)
    assert isinstance(second.value.body, dict)
    assert "not asked: its provider asked not to be called" in second.value.body["message"]
    assert len(providers.seen()) == before
