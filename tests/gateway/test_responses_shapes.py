"""The Responses API's pure translations (``services/gateway/responses_*.py``): a request
as a chat body, a chat completion as a Response, a chat stream as the Responses events."""

from __future__ import annotations

from typing import Any

import pytest

from agentladder.errors import InvalidInput
from agentladder.services.gateway.responses_answer import response_of
from agentladder.services.gateway.responses_request import chat_body
from agentladder.services.gateway.responses_stream import Bridge


def test_the_fields_map_to_the_chat_body() -> None:
    """Renamed, kept, dropped and unknown fields; ``text.format`` json_schema is
    ``response_format``; a stream asks for its usage."""
    schema = {"type": "json_schema", "name": "answer", "schema": {"type": "object"},
              "strict": True}  # fmt: skip
    body = chat_body({
        "model": "alpha", "input": "Hi", "max_output_tokens": 9, "temperature": 0.5,
        "store": True, "metadata": {"k": "v"}, "include": [], "truncation": "auto",
        "text": {"format": schema}, "reasoning": {"effort": "low"}, "seed": 7, "stream": True,
    })  # fmt: skip
    assert body == {
        "model": "alpha", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 9,
        "temperature": 0.5, "seed": 7, "stream": True,
        "stream_options": {"include_usage": True}, "reasoning_effort": "low",
        "response_format": {"type": "json_schema", "json_schema": {
            "name": "answer", "schema": {"type": "object"}, "strict": True}},
    }  # fmt: skip


def test_consecutive_function_calls_are_one_assistant_message() -> None:
    """Two calls in a row (parallel tool calls) are one message's ``tool_calls``; their
    outputs are tool messages; a non-string output is its JSON."""
    calls: list[dict[str, Any]] = [
        {"type": "function_call", "call_id": f"c{n}", "name": "f", "arguments": "{}"}
        for n in (1, 2)
    ]
    outputs = [{"type": "function_call_output", "call_id": "c1", "output": {"ok": True}}]
    found = chat_body({"model": "m", "input": [*calls, *outputs]})["messages"]
    assert [m["role"] for m in found] == ["assistant", "tool"]
    assert [c["id"] for c in found[0]["tool_calls"]] == ["c1", "c2"]
    assert found[1]["content"] == '{"ok": true}'


@pytest.mark.parametrize(
    ("request_body", "field"),
    [
        ({"input": "x", "previous_response_id": "resp_1"}, "previous_response_id"),
        ({"input": "x", "tools": [{"type": "file_search"}]}, "tools[0].type"),
        ({"input": []}, "input"),
        ({"input": [{"role": "robot", "content": "x"}]}, "input[0].role"),
        ({"input": [{"role": "user", "content": [{"type": "input_file"}]}]},
         "input[0].content[0].type"),
        ({"input": "x", "tool_choice": {"type": "web_search"}}, "tool_choice"),
        ({"input": "x", "text": {"format": {"type": "yaml"}}}, "text.format.type"),
    ],
)  # fmt: skip
def test_what_cannot_be_bridged_is_refused_naming_its_field(
    request_body: dict[str, Any], field: str
) -> None:
    """A clear one-line refusal naming the field."""
    with pytest.raises(InvalidInput) as refused:
        chat_body({"model": "m", **request_body})
    assert refused.value.field == field


def test_a_completion_at_its_token_limit_is_incomplete() -> None:
    """``finish_reason: length`` is status ``incomplete`` (max_output_tokens)."""
    completion = {"choices": [{"message": {"role": "assistant", "content": "par"},
                               "finish_reason": "length"}]}  # fmt: skip
    response = response_of({"model": "m"}, completion)
    assert response["status"] == "incomplete"
    assert response["incomplete_details"] == {"reason": "max_output_tokens"}
    assert response["output"][0]["content"][0]["text"] == "par"
    assert response["usage"]["total_tokens"] == 0


def test_a_stream_of_text_then_a_tool_call_closes_the_text_first() -> None:
    """Text, then a tool call: the message item is done before the call's item is added;
    the completed Response holds both, in order."""
    bridge = Bridge({"model": "m"}, "resp_1", 1.0)
    kinds = [e["type"] for e in bridge.start()]
    chunks: list[dict[str, Any]] = [
        {"choices": [{"delta": {"content": "Let me look."}}]},
        {"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "c1",
                                                "function": {"name": "f", "arguments": "{"}}]}}]},
        {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "}"}}]}}]},
        {"choices": [{"delta": {}, "finish_reason": "tool_calls"}]},
        {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4}},
    ]  # fmt: skip
    for chunk in chunks:
        kinds += [e["type"] for e in bridge.chunk(chunk)]
    last = bridge.finish()
    kinds += [e["type"] for e in last]
    assert kinds == [
        "response.created", "response.in_progress", "response.output_item.added",
        "response.content_part.added", "response.output_text.delta",
        "response.output_text.done", "response.content_part.done", "response.output_item.done",
        "response.output_item.added", "response.function_call_arguments.delta",
        "response.function_call_arguments.delta", "response.function_call_arguments.done",
        "response.output_item.done", "response.completed",
    ]  # fmt: skip
    response = last[-1]["response"]
    assert [item["type"] for item in response["output"]] == ["message", "function_call"]
    assert response["output"][1]["arguments"] == "{}"
    assert response["usage"]["total_tokens"] == 7
    assert bridge.finish() == []
