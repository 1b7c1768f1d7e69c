"""Providers that misbehave as real servers do, through a served gateway and OpenAI's own
client: a request refused as invalid is the caller's to fix, not the agent's failure; an
error sent with status 200, a completion without choices, lines that are not events and
an error as a stream's first event are the agent's failures, passed over before any byte
goes to the caller; an error event midway breaks the stream; a whole completion sent to a
stream request reaches the caller as the stream it asked for."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from tests.gateway.provider import COMPLETION_TOKENS, PROMPT_TOKENS, Providers
from tests.served import Server, seed_scores, start_server

ASK: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Which controls matter?"}]
AGENTS = {  # name: (provider behaviour, tags, score at audit)
    "good": ("good:good", "[fits]", 8.0),
    "longctx": ("reject:longctx", "[fits, strict, mixed]", 9.5),
    "longctx2": ("reject:longctx2", "[strict]", 9.0),
    "broken": ("fail:broken", "[mixed]", 9.8),
    "errorbody": ("errorbody:errorbody", "[]", 5.0),
    "empty": ("empty:empty", "[]", 5.0),
    "plain": ("plain:plain", "[]", 5.0),
    "errorevent": ("errorevent:errorevent", "[]", 5.0),
    "midevent": ("midevent:midevent", "[]", 5.0),
    "notsse": ("notsse:notsse", "[]", 5.0),
    "mislabelled": ("mislabelled:mislabelled", "[]", 5.0),
}


def _config(base_url: str) -> str:
    agents = "".join(
        f"""
  - name: {name}
    model_name: {name}-model
    input_price_per_mtok: 1.0
    output_price_per_mtok: 2.0
    capability_tags: {tags}
    backend: {{kind: openai, base_url: "{base_url}", model: "{model}"}}"""
        for name, (model, tags, _) in AGENTS.items()
    )
    return f"""
gateway:
  max_attempts: 3
  models:
    fits: {{task_type: audit, tags: [fits]}}
    strict: {{task_type: audit, tags: [strict]}}
    mixed: {{task_type: audit, tags: [mixed]}}
agents:{agents}
"""


@pytest.fixture(scope="module")
def gateway(providers: Providers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """`agentladder serve` (no tokens: loopback is admin) with judgments ordering the
    agents at ``audit`` by their score."""
    server = start_server(tmp_path_factory.mktemp("misbehaving"), _config(providers.base_url))
    try:
        seed_scores(server, {name: score for name, (_, _, score) in AGENTS.items()})
        yield server
    finally:
        server.stop()


@pytest.fixture
def client(gateway: Server) -> Iterator[openai.OpenAI]:
    """OpenAI's client on the gateway, without retries of its own."""
    made = openai.OpenAI(base_url=gateway.url("/v1"), api_key="local", max_retries=0, timeout=30)
    try:
        yield made
    finally:
        made.close()


def _health(server: Server, agent: str) -> dict[str, Any]:
    found: dict[str, Any] = httpx.get(server.url(f"/agents/{agent}")).json()["health"]
    return found


def _metric(server: Server, name: str, **labels: str) -> float:
    """The value of one sample of ``/metrics`` (0 when it is not there)."""
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in httpx.get(server.url("/metrics")).text.splitlines():
        if line.startswith(f"{name}{{{wanted}}} "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_a_request_every_agent_refuses_is_the_callers_400_and_nobodys_failure(
    gateway: Server, client: openai.OpenAI
) -> None:
    """Both agents at ``strict`` answer 400 (context too long): the caller gets 400 with
    the provider's code and param, naming both; neither agent's health counts a failure,
    however often the caller sends it (three failures in a row would make an agent down)."""
    for _ in range(4):
        with pytest.raises(openai.BadRequestError) as refused:
            client.chat.completions.create(model="strict", messages=ASK)
        assert refused.value.code == "context_length_exceeded"
        assert refused.value.param == "messages"
        message = str(refused.value.message)
        assert "refused as invalid" in message
        assert "longctx: rejected: answered 400" in message
        assert "longctx2: rejected: answered 400" in message
    with pytest.raises(openai.BadRequestError):  # a stream is refused alike
        client.chat.completions.create(model="strict", messages=ASK, stream=True)
    for agent in ("longctx", "longctx2"):
        health = _health(gateway, agent)
        assert (health["status"], health["calls"], health["failed"]) == ("ok", 0, 0), health
        refusals = _metric(
            gateway, "agentladder_provider_call_errors_total", agent=agent, call="chat",
            kind="rejected",
        )  # fmt: skip
        assert refusals >= 5
    assert _metric(gateway, "agentladder_gateway_unavailable_total", task_type="audit") == 0


def test_a_refusal_falls_back_to_an_agent_that_takes_the_request(
    gateway: Server, client: openai.OpenAI
) -> None:
    """At ``fits`` the best agent refuses (its context is too short), the next answers."""
    answer = client.chat.completions.with_raw_response.create(model="fits", messages=ASK)
    assert answer.headers["x-agentladder-agent"] == "good"
    assert answer.parse().choices[0].message.content == "answer from good"
    assert _health(gateway, "longctx")["failed"] == 0


def test_a_refusal_beside_a_failure_is_503_naming_both(
    gateway: Server, client: openai.OpenAI
) -> None:
    """At ``mixed`` one agent fails (500) and one refuses: the request may be fine, so the
    answer is the 503 of agents that failed, each named with its reason."""
    with pytest.raises(openai.InternalServerError) as failed:
        client.chat.completions.create(model="mixed", messages=ASK)
    assert failed.value.status_code == 503
    assert failed.value.code == "agents_failed"
    message = str(failed.value.message)
    assert "broken: http: answered 500" in message
    assert "longctx: rejected: answered 400" in message
    assert _health(gateway, "broken")["failed"] >= 1
    assert _health(gateway, "longctx")["failed"] == 0


@pytest.mark.parametrize(
    ("agent", "stream", "reason"),
    [
        ("errorbody", False, "unparseable: an error object, not a chat completion:"
                             " errorbody is overloaded"),
        ("errorbody", True, "unparseable: an error object, not a chat completion:"
                            " errorbody is overloaded"),
        ("empty", False, "unparseable: not a chat completion: no choices"),
        ("empty", True, "unparseable: not a chat completion: no choices"),
        ("errorevent", True, "invalid: the stream's first event is an error:"
                             " errorevent failed at once"),
        ("notsse", True, "unparseable: not an event stream: 'oops, this is not an event"
                         " stream'"),
    ],
)  # fmt: skip
def test_an_answer_that_is_no_answer_is_the_agents_failure(
    gateway: Server, client: openai.OpenAI, agent: str, stream: bool, reason: str
) -> None:
    """Status 200 without an answer is not answered: 503 naming the agent and why, the
    failure in its health; nothing of it reached the caller as an answer."""
    before = _health(gateway, agent)["failed"]
    with pytest.raises(openai.InternalServerError) as failed:
        client.chat.completions.create(model=agent, messages=ASK, stream=stream)
    assert failed.value.status_code == 503
    assert f"{agent}: {reason}" in str(failed.value.message)
    assert _health(gateway, agent)["failed"] == before + 1
    answered = _metric(
        gateway, "agentladder_gateway_requests_total", agent=agent, task_type="general",
        outcome="answered",
    )  # fmt: skip
    assert answered == 0


def test_an_error_event_midway_breaks_the_stream(gateway: Server, client: openai.OpenAI) -> None:
    """One piece, then an error event: OpenAI's client raises it; the request counts as
    ``broken`` and as the agent's failure, not as answered."""
    pieces: list[str] = []

    def read() -> None:
        for chunk in client.chat.completions.create(model="midevent", messages=ASK, stream=True):
            pieces.extend(c.delta.content or "" for c in chunk.choices)

    with pytest.raises(openai.APIError, match="midevent failed midway"):
        read()
    assert pieces == ["answer "]
    labels = {"agent": "midevent", "task_type": "general"}
    assert _metric(gateway, "agentladder_gateway_requests_total", **labels, outcome="broken") == 1
    assert _metric(gateway, "agentladder_gateway_requests_total", **labels, outcome="answered") == 0
    health = _health(gateway, "midevent")
    assert health["failed"] == 1
    assert "midevent failed midway" in str(health["last_error"])


def test_a_whole_completion_to_a_stream_request_reaches_the_caller_as_a_stream(
    gateway: Server, client: openai.OpenAI
) -> None:
    """A provider that does not stream: the caller's client reads one chunk with the
    answer, then the usage it asked for; the usage is the provider's."""
    chunks = list(
        client.chat.completions.create(
            model="plain", messages=ASK, stream=True, stream_options={"include_usage": True}
        )
    )
    text = "".join(c.delta.content or "" for chunk in chunks for c in chunk.choices)
    assert text == "answer from plain"
    assert [c.choices[0].finish_reason for c in chunks if c.choices] == ["stop"]
    usage = chunks[-1].usage
    assert usage is not None
    assert (usage.prompt_tokens, usage.completion_tokens) == (PROMPT_TOKENS, COMPLETION_TOKENS)
    without = list(client.chat.completions.create(model="plain", messages=ASK, stream=True))
    assert [c.usage for c in without] == [None]
    assert _health(gateway, "plain")["failed"] == 0


@pytest.mark.parametrize("stream", [True, False])
def test_an_answer_labelled_as_the_other_kind_is_read_by_what_it_is(
    client: openai.OpenAI, stream: bool
) -> None:
    """A stream labelled ``application/json`` is relayed as a stream; a whole answer
    labelled ``text/event-stream`` is read as one: both reach the caller whole."""
    if stream:
        chunks = client.chat.completions.create(model="mislabelled", messages=ASK, stream=True)
        text = "".join(c.delta.content or "" for chunk in chunks for c in chunk.choices)
    else:
        answer = client.chat.completions.create(model="mislabelled", messages=ASK)
        text = answer.choices[0].message.content or ""
    assert text == "answer from mislabelled"


def test_the_served_log_has_no_traceback(gateway: Server) -> None:
    """Whatever the providers did (every test above ran on this server), the server logged
    no traceback."""
    log = gateway.log.read_text(encoding="utf-8")
    assert "POST /v1/chat/completions" in log
    assert "Traceback" not in log
