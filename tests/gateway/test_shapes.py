"""``shapes.py``: what a provider's answer must be for the gateway to pass it on."""

from __future__ import annotations

import json

import pytest

from agentladder.errors import ProviderError, Rejected
from agentladder.services.gateway.estimate import Tally
from agentladder.services.gateway.events import Bounds, EventReader
from agentladder.services.gateway.shapes import as_events, completion, failed

CHUNK = b'data: {"choices": [{"index": 0, "delta": {"content": "hi"}}]}\n\n'
BOUNDS = Bounds(max_line_bytes=65_536, max_start_bytes=65_536, max_stream_bytes=1 << 20)


def stream_start(start: bytes) -> bool:
    """Whether a stream's first bytes hold its first event, read as the gateway does
    (``events.py``, whose start's lines ``shapes.start_line`` checks)."""
    reader = EventReader(Tally(), BOUNDS)
    reader.feed(start)
    return reader.started


@pytest.mark.parametrize("status", [400, 413, 422])
def test_a_refusal_as_invalid_is_rejected_with_the_providers_error(status: int) -> None:
    body = json.dumps(
        {"error": {"message": "too long", "type": "invalid_request_error", "param": "messages",
                   "code": "context_length_exceeded", "extra": 1}}
    ).encode()  # fmt: skip
    error = failed(status, body, None)
    assert isinstance(error, Rejected)
    assert (error.kind, error.status, error.retryable) == ("rejected", status, False)
    assert error.detail == {
        "message": "too long", "type": "invalid_request_error", "param": "messages",
        "code": "context_length_exceeded",
    }  # fmt: skip


def test_a_refusal_without_an_error_object_has_no_detail() -> None:
    error = failed(400, b"<html>Bad Request</html>", None)
    assert isinstance(error, Rejected)
    assert error.detail == {}
    assert str(error) == "rejected: answered 400: <html>Bad Request</html>"


@pytest.mark.parametrize("status", [401, 403, 404, 429, 500, 502, 503])
def test_other_error_statuses_are_the_agents_failures(status: int) -> None:
    error = failed(status, b'{"error": {"message": "no"}}', 7.0)
    assert not isinstance(error, Rejected)
    assert (error.kind, error.retry_after_s) == ("http", 7.0)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"not json", "unparseable: not JSON: 'not json'"),
        (b"[1, 2]", "unparseable: not a chat completion: '[1, 2]'"),
        (b'{"error": {"message": "overloaded"}}',
         "unparseable: an error object, not a chat completion: overloaded"),
        (b'{"error": "plain text"}', "unparseable: an error object, not a chat completion:"
                                     " plain text"),
        (b'{"choices": []}', "unparseable: not a chat completion: no choices"),
        (b'{"choices": null}', "unparseable: not a chat completion: no choices"),
    ],
)  # fmt: skip
def test_a_body_that_is_no_chat_completion_is_refused(body: bytes, reason: str) -> None:
    with pytest.raises(ProviderError) as refused:
        completion(body)
    assert str(refused.value) == reason


def test_a_chat_completion_is_returned_decoded() -> None:
    body = b'{"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": 1}}'
    assert completion(body)["choices"][0]["message"]["content"] == "x"


@pytest.mark.parametrize("empty", [b"null", b"{}", b'""'])
def test_an_empty_error_beside_an_answer_is_no_error(empty: bytes) -> None:
    """Some servers send ``"error": null`` in every answer and event: not an error."""
    body = b'{"error": ' + empty + b', "choices": [{"message": {"content": "x"}}]}'
    assert completion(body)["choices"][0]["message"]["content"] == "x"
    assert stream_start(b'data: {"error": ' + empty + b', "choices": []}\n') is True


@pytest.mark.parametrize(
    "start",
    [
        CHUNK,
        b": keep-alive\n\n" + CHUNK,
        b"event: message\r\nid: 1\r\n" + CHUNK.replace(b"\n", b"\r\n"),
        b"retry: 100\n" + CHUNK,
        b"data: [DONE]\n\n",
        b"data: not json, the caller's to read\n",
    ],
)
def test_a_stream_whose_first_event_is_whole_passes(start: bytes) -> None:
    assert stream_start(start) is True


@pytest.mark.parametrize("start", [b"", b": keep-alive\n\n", b'data: {"choi', b"event: message\n"])
def test_a_stream_without_a_whole_data_line_needs_more(start: bytes) -> None:
    assert stream_start(start) is False


def test_a_stream_start_past_the_cap_is_the_agents_failure() -> None:
    """More than ``max_start_bytes`` before the first event: a failure naming the bound
    (it was passed on unchecked before)."""
    with pytest.raises(ProviderError, match=r"^limit: more than max_start_bytes \(65536"):
        stream_start(b": " + b"x" * 70_000)


@pytest.mark.parametrize(
    ("start", "reason"),
    [
        (b"oops\n", "unparseable: not an event stream: 'oops'"),
        (b": ok\n<html>\n", "unparseable: not an event stream: ': ok <html>'"),
        (b'data: {"error": {"message": "at once"}}\n\n',
         "invalid: the stream's first event is an error: at once"),
    ],
)  # fmt: skip
def test_a_stream_that_starts_wrong_is_refused(start: bytes, reason: str) -> None:
    with pytest.raises(ProviderError) as refused:
        stream_start(start)
    assert str(refused.value) == reason


def _events(stream: bytes) -> list[object]:
    lines = [line[6:] for line in stream.split(b"\n\n") if line.startswith(b"data: ")]
    assert lines[-1] == b"[DONE]"
    return [json.loads(line) for line in lines[:-1]]


def test_a_whole_completion_becomes_one_chunk_then_done() -> None:
    answer = {
        "id": "c1", "created": 5, "model": "m", "object": "chat.completion",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "hello"},
             "finish_reason": "stop"},
            {"index": 1, "message": {"role": "assistant", "content": None, "tool_calls": [
                {"id": "t1", "type": "function",
                 "function": {"name": "f", "arguments": "{}"}}]},
             "finish_reason": "tool_calls"},
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    }  # fmt: skip
    events = _events(as_events(answer, include_usage=False))
    assert events == [
        {"id": "c1", "object": "chat.completion.chunk", "created": 5, "model": "m",
         "choices": [
             {"index": 0, "delta": {"role": "assistant", "content": "hello"},
              "finish_reason": "stop", "logprobs": None},
             {"index": 1, "delta": {"role": "assistant", "content": None, "tool_calls": [
                 {"index": 0, "id": "t1", "type": "function",
                  "function": {"name": "f", "arguments": "{}"}}]},
              "finish_reason": "tool_calls", "logprobs": None},
         ]},
    ]  # fmt: skip
    with_usage = _events(as_events(answer, include_usage=True))
    assert with_usage[:1] == events
    assert with_usage[1] == {
        "id": "c1", "object": "chat.completion.chunk", "created": 5, "model": "m",
        "choices": [], "usage": answer["usage"],
    }  # fmt: skip
