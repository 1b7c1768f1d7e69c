"""OpenAIProvider against a real chat-completions server on loopback: answers and failures."""

from __future__ import annotations

import asyncio
import socket
import time
from typing import Any, Literal

import httpx
import pytest

from agentladder.domain.agents import AgentConfig
from agentladder.errors import ProviderError
from agentladder.providers.base import EvaluateRequest, ProposeRequest, Usage
from agentladder.providers.openai import OpenAIProvider, call_cost, retry_after_s
from agentladder.providers.settings import OpenAISettings
from tests.providers.chat_server import ChatServer, Reply, completion

AGENT = AgentConfig(
    name="audit_expert",
    model_name="gpt-4o",
    input_price_per_mtok=2.5,
    output_price_per_mtok=10.0,
)
KEY_ENV = "AGENTLADDER_TEST_KEY"
ENVIRON = {KEY_ENV: "sk-test-123"}
PROPOSE = ProposeRequest(deliberation_id="d1", round=1, user_query="Is 17 prime?")
EVALUATE = EvaluateRequest(
    deliberation_id="d1", round=1, user_query="Is 17 prime?", proposal="Yes, 17 is prime."
)


def settings(url: str, **overrides: Any) -> OpenAISettings:
    """Settings for the test server with the test key variable and a short timeout."""
    values: dict[str, Any] = {"base_url": url, "api_key_env": KEY_ENV, "timeout_s": 2.0}
    return OpenAISettings(**(values | overrides))


def ask(server_url: str, call: str, **overrides: Any) -> Any:
    """Run one propose or evaluate call of a fresh provider, closing it afterwards."""
    environ = overrides.pop("environ", ENVIRON)

    async def body() -> Any:
        provider = OpenAIProvider(AGENT, settings(server_url, **overrides), environ=environ)
        try:
            if call == "propose":
                return await provider.propose(PROPOSE)
            return await provider.evaluate(EVALUATE)
        finally:
            await provider.aclose()

    return asyncio.run(body())


def failure(server_url: str, call: str = "propose", **overrides: Any) -> ProviderError:
    """The ProviderError a call raises."""
    with pytest.raises(ProviderError) as caught:
        ask(server_url, call, **overrides)
    return caught.value


def test_proposal_has_content_usage_and_sends_key_and_model(chat_server: ChatServer) -> None:
    """A proposal is the reply's content; usage maps; bearer key, model and limits are sent."""
    reply = completion("Yes: 17 is prime.", prompt_tokens=40, completion_tokens=7)
    chat_server.replies.append(Reply(reply))
    proposal = ask(chat_server.url, "propose", max_tokens=256, temperature=0.5)
    assert proposal.content == "Yes: 17 is prime."
    assert proposal.usage == Usage(input_tokens=40, output_tokens=7)
    [seen] = chat_server.seen
    assert (seen.method, seen.path) == ("POST", "/v1/chat/completions")
    assert seen.headers["Authorization"] == "Bearer sk-test-123"
    assert seen.body["model"] == "gpt-4o"
    assert (seen.body["max_tokens"], seen.body["temperature"]) == (256, 0.5)
    assert [m["role"] for m in seen.body["messages"]] == ["system", "user"]
    assert "Is 17 prime?" in seen.body["messages"][1]["content"]
    assert "response_format" not in seen.body


def test_settings_model_overrides_and_no_key_env_sends_no_authorization(
    chat_server: ChatServer,
) -> None:
    """settings.model wins over the agent's model_name; without api_key_env no header is sent."""
    ask(chat_server.url + "/", "propose", model="llama3", api_key_env=None, environ={})
    [seen] = chat_server.seen
    assert seen.body["model"] == "llama3"
    assert seen.path == "/v1/chat/completions"
    assert "Authorization" not in seen.headers


def test_missing_usage_is_estimated_from_the_text(chat_server: ChatServer) -> None:
    """A server that reports no usage gets about four characters per token."""
    answer = "x" * 80
    chat_server.replies.append(Reply(completion(answer, prompt_tokens=None)))
    proposal = ask(chat_server.url, "propose")
    assert proposal.usage.output_tokens == 20
    assert proposal.usage.input_tokens > 0


@pytest.mark.parametrize(
    "content",
    [
        '{"score": 8.5, "rationale": "Correct and brief."}',
        '```json\n{"score": 8.5, "rationale": "Correct and brief."}\n```',
        'Here is my review.\n{"score": 8.5, "rationale": "Correct and brief."}\nHope it helps',
        'Thoughts {not json} then {"verdict": {"score": "8.5", "rationale": "Correct and brief."}}',
    ],
)
def test_evaluation_json_in_prose_or_fences_is_parsed(
    chat_server: ChatServer, content: str
) -> None:
    """The first JSON object with a score is read, whatever prose or fences surround it."""
    chat_server.replies.append(Reply(completion(content)))
    evaluation = ask(chat_server.url, "evaluate")
    assert (evaluation.score, evaluation.rationale) == (8.5, "Correct and brief.")
    assert "Yes, 17 is prime." in chat_server.seen[0].body["messages"][1]["content"]


def test_slow_answer_is_a_timeout_within_timeout_s(chat_server: ChatServer) -> None:
    """A server slower than timeout_s (0.3 s) gives ProviderError('timeout') naming the
    0.3 s, after at least that long: the server holds its answer until the test ends, so
    the call gave up on its own deadline, not on the server's answer or a later one."""
    chat_server.replies.append(Reply(delay_s=3600.0))  # answered only when the server stops
    started = time.monotonic()
    error = failure(chat_server.url, timeout_s=0.3)
    elapsed = time.monotonic() - started
    assert error.kind == "timeout"
    assert str(error) == f"timeout: no answer from {chat_server.url}/chat/completions in 0.3 s"
    assert len(chat_server.seen) == 1  # asked once, and still unanswered
    assert not chat_server.stopping.is_set()
    assert elapsed >= 0.25


@pytest.mark.parametrize("status", [500, 429, 401, 404])
def test_http_error_status_is_an_http_error_with_status_and_excerpt(
    chat_server: ChatServer, status: int
) -> None:
    """A 4xx/5xx answer is ProviderError('http') naming the status and the body's start."""
    chat_server.replies.append(Reply('{"error": {"message": "overloaded"}}', status=status))
    error = failure(chat_server.url)
    assert error.kind == "http"
    assert str(status) in str(error)
    assert "overloaded" in str(error)


@pytest.mark.parametrize(
    ("status", "retryable"),
    [(400, False), (401, False), (403, False), (404, False), (413, False), (422, False),
     (301, False), (408, True), (409, True), (425, True), (429, True), (500, True),
     (502, True), (503, True)],
)  # fmt: skip
def test_a_status_that_answers_the_same_request_alike_is_not_retried(
    chat_server: ChatServer, status: int, retryable: bool
) -> None:
    """A context too long (400), a bad key (401), an unknown model (404) answer a
    deliberation's retry the same: not retryable, so the rounds ask once; a timeout,
    conflict, too early, too many requests and every 5xx may pass: retried."""
    chat_server.replies.append(Reply('{"error": {"message": "no"}}', status=status))
    error = failure(chat_server.url)
    assert (error.kind, error.retryable) == ("http", retryable)


def test_a_retry_after_header_is_carried_by_the_error(chat_server: ChatServer) -> None:
    """A 429 with Retry-After: 30 is ProviderError('http') with retry_after_s 30 (health
    cooldowns honour it); without the header, None."""
    chat_server.replies.append(Reply("slow down", status=429, headers=(("Retry-After", "30"),)))
    assert failure(chat_server.url).retry_after_s == 30.0
    chat_server.replies.append(Reply("slow down", status=429))
    assert failure(chat_server.url).retry_after_s is None


def test_retry_after_reads_seconds_and_http_dates() -> None:
    """Delta-seconds as they are; an HTTP date as the seconds left from now (0 when past);
    anything else None."""
    now = 1_767_225_600.0  # Thu, 01 Jan 2026 00:00:00 GMT
    assert retry_after_s("120", now) == 120.0
    assert retry_after_s("Thu, 01 Jan 2026 00:01:30 GMT", now) == 90.0
    assert retry_after_s("Wed, 31 Dec 2025 23:00:00 GMT", now) == 0.0
    assert retry_after_s("soon", now) is None
    assert retry_after_s(None, now) is None


@pytest.mark.parametrize(
    "body",
    [
        "<html>Bad gateway</html>",
        {"object": "chat.completion"},
        {"choices": []},
        {"choices": [{"text": "legacy completions shape"}]},
        completion(None),
        [1, 2, 3],
    ],
)
def test_malformed_body_is_unparseable(chat_server: ChatServer, body: Any) -> None:
    """A body that is not JSON or not the chat-completions shape is 'unparseable'."""
    chat_server.replies.append(Reply(body if isinstance(body, dict | str) else str(body)))
    assert failure(chat_server.url).kind == "unparseable"


@pytest.mark.parametrize(
    "content",
    [
        '{"score": 11, "rationale": "too kind"}',
        '{"score": -1}',
        '{"score": "NaN"}',
        '{"score": NaN}',
        '{"score": Infinity}',
        '{"score": true}',
        '{"score": "very good"}',
    ],
)
def test_score_out_of_range_or_not_finite_is_invalid(chat_server: ChatServer, content: str) -> None:
    """A score outside 0..10, NaN, infinite or not a number is 'invalid', never a crash."""
    chat_server.replies.append(Reply(completion(content)))
    assert failure(chat_server.url, "evaluate").kind == "invalid"


@pytest.mark.parametrize("content", ["I would give it an eight.", '{"rationale": "no score"}'])
def test_evaluation_without_scored_json_is_unparseable(
    chat_server: ChatServer, content: str
) -> None:
    """An evaluation reply with no JSON object holding a score is 'unparseable'."""
    chat_server.replies.append(Reply(completion(content)))
    assert failure(chat_server.url, "evaluate").kind == "unparseable"


def test_refusal_and_empty_answer(chat_server: ChatServer) -> None:
    """A refusal message is 'refused'; a blank answer is 'invalid'."""
    refusal = completion(None)
    refusal["choices"][0]["message"]["refusal"] = "I can't help with that."
    chat_server.replies.extend([Reply(refusal), Reply(completion("  \n"))])
    assert failure(chat_server.url).kind == "refused"
    assert failure(chat_server.url).kind == "invalid"


@pytest.mark.parametrize("mode", ["close", "truncate"])
def test_connection_closed_abruptly_is_an_http_error(
    chat_server: ChatServer, mode: Literal["close", "truncate"]
) -> None:
    """The server closing the connection before or during the answer is ProviderError('http')."""
    chat_server.replies.append(Reply(mode=mode))
    assert failure(chat_server.url).kind == "http"


def test_connection_refused_is_an_http_error() -> None:
    """Nobody listening on the port is ProviderError('http'), not a crash."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert failure(f"http://127.0.0.1:{port}/v1").kind == "http"


@pytest.mark.parametrize("url", ["http://", "http://[::1/v1"])
def test_unusable_base_url_is_an_http_error(url: str) -> None:
    """A base_url that passes the settings' pattern but is no usable URL fails as 'http'."""
    assert failure(url).kind == "http"


def test_missing_key_env_is_refused_at_call_time(chat_server: ChatServer) -> None:
    """Construction succeeds; the call is 'refused' naming the variable and sends nothing."""
    error = failure(chat_server.url, environ={})
    assert error.kind == "refused"
    assert KEY_ENV in str(error)
    assert chat_server.seen == []


def test_given_client_is_shared_and_left_open(chat_server: ChatServer) -> None:
    """Two providers share a given client; aclose leaves it to its owner."""

    async def body() -> None:
        async with httpx.AsyncClient() as client:
            one = OpenAIProvider(AGENT, settings(chat_server.url), client=client, environ=ENVIRON)
            two = OpenAIProvider(AGENT, settings(chat_server.url), client=client, environ=ENVIRON)
            await one.propose(PROPOSE)
            await one.aclose()
            await two.propose(PROPOSE)
            await two.aclose()
            assert not client.is_closed

    asyncio.run(body())
    assert len(chat_server.seen) == 2


def test_call_cost_prices_usage_with_the_agents_prices() -> None:
    """1000 input and 500 output tokens at 2.5 / 10.0 per million tokens cost 0.0075."""
    assert call_cost(AGENT, Usage(input_tokens=1000, output_tokens=500)) == 0.0075
    assert call_cost(AgentConfig(name="free"), Usage(input_tokens=10**6)) == 0.0


def test_answer_longer_than_max_response_bytes_is_not_read(chat_server: ChatServer) -> None:
    """A 3 MB answer with a 1 MiB cap is a failed call naming the cap; under it, it is read."""
    chat_server.replies.append(Reply(body=completion("y" * 600_000)))
    chat_server.replies.append(Reply(body=completion("x" * 3_000_000)))
    capped: dict[str, Any] = {"max_response_bytes": 1024 * 1024}
    proposal = ask(chat_server.url, "propose", **capped)
    assert len(proposal.content) == 600_000
    error = failure(chat_server.url, **capped)
    assert error.kind == "http"
    assert "more than 1048576 bytes" in str(error)
