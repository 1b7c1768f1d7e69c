"""``POST /v1/responses`` as OpenAI's own client sees it: the Responses API bridged to the
agents' chat completions (`agentladder serve` in front of ``provider.py``; agents in
``conftest.py``)."""

from __future__ import annotations

import re

import httpx
import openai
import pytest
from openai.types.responses import FunctionToolParam, ResponseInputParam

from tests.gateway.conftest import CLIENT
from tests.gateway.provider import COMPLETION_TOKENS, PROMPT_TOKENS, TOOL_ARGUMENTS, Providers
from tests.gateway.test_gateway_served import client
from tests.served import Server

CONTRACT = re.compile(r"^gw-[0-9a-f]{32}$")
WEATHER: FunctionToolParam = {
    "type": "function", "name": "weather", "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"], "additionalProperties": False},
    "strict": True,
}  # fmt: skip


def test_a_text_answer_is_a_response_with_the_gateway_headers(
    shared_gateway: Server, providers: Providers
) -> None:
    """A string ``input`` is one user message to alpha; its answer is a completed Response
    (one message item, its text, the usage) with the chat route's headers."""
    before = len(providers.seen())
    raw = client(shared_gateway).responses.with_raw_response.create(model="alpha", input="Hello?")
    answer = raw.parse()
    assert answer.id.startswith("resp_")
    assert answer.object == "response"
    assert answer.status == "completed"
    assert answer.model == "alpha"
    assert answer.output_text == "answer from alpha"
    assert [item.type for item in answer.output] == ["message"]
    assert answer.usage is not None
    assert answer.usage.input_tokens == PROMPT_TOKENS
    assert answer.usage.output_tokens == COMPLETION_TOKENS
    assert answer.usage.total_tokens == PROMPT_TOKENS + COMPLETION_TOKENS
    assert raw.headers["x-agentladder-agent"] == "alpha"
    assert CONTRACT.match(raw.headers["x-agentladder-contract"])
    assert raw.headers["x-agentladder-check"] == "no"
    sent = providers.seen()[before:]
    assert [s["messages"] for s in sent] == [[{"role": "user", "content": "Hello?"}]]


def test_instructions_are_a_system_message_first(
    shared_gateway: Server, providers: Providers
) -> None:
    """``instructions`` goes first as a system message; a list ``input`` with
    ``input_text`` parts is the user message."""
    before = len(providers.seen())
    given: ResponseInputParam = [
        {"role": "user", "content": [{"type": "input_text", "text": "Which controls?"}]}
    ]
    answer = client(shared_gateway).responses.create(
        model="alpha", instructions="Be brief.", input=given, temperature=0.2,
        max_output_tokens=50,
    )  # fmt: skip
    assert answer.output_text == "answer from alpha"
    assert answer.instructions == "Be brief."
    sent = providers.seen()[before:]
    assert sent[0]["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "Which controls?"}]},
    ]


def test_a_function_call_round_trip(shared_gateway: Server, providers: Providers) -> None:
    """alpha calls the function tool; its output sent back in ``input`` (with the call)
    is answered, as OpenAI's Responses API would."""
    openai_client = client(shared_gateway)
    asked: ResponseInputParam = [{"role": "user", "content": "Weather in Paris?"}]
    first = openai_client.responses.create(model="alpha", input=asked, tools=[WEATHER])
    calls = [item for item in first.output if item.type == "function_call"]
    assert len(calls) == 1
    assert calls[0].name == "weather"
    assert calls[0].arguments == TOOL_ARGUMENTS
    assert calls[0].call_id == "call_alpha"
    assert str(calls[0].id).startswith("fc_")
    assert first.output_text == ""
    before = len(providers.seen())
    then: ResponseInputParam = [
        *asked,
        {"type": "function_call", "call_id": calls[0].call_id, "name": calls[0].name,
         "arguments": calls[0].arguments},
        {"type": "function_call_output", "call_id": calls[0].call_id, "output": "sunny, 21 C"},
    ]  # fmt: skip
    second = openai_client.responses.create(model="alpha", input=then, tools=[WEATHER])
    assert second.output_text == "answer from alpha: sunny, 21 C"
    sent = providers.seen()[before:][0]["messages"]
    assert sent[1] == {
        "role": "assistant", "content": None,
        "tool_calls": [{"id": "call_alpha", "type": "function",
                        "function": {"name": "weather", "arguments": TOOL_ARGUMENTS}}],
    }  # fmt: skip
    assert sent[2] == {"role": "tool", "tool_call_id": "call_alpha", "content": "sunny, 21 C"}


def test_a_stream_is_the_responses_events(shared_gateway: Server) -> None:
    """``stream: true``: the client's stream helper reads the text deltas in order and the
    final Response, with its usage; the events come in the Responses API's order."""
    openai_client = client(shared_gateway)
    with openai_client.responses.stream(model="alpha", input="Hello?") as stream:
        kinds = []
        deltas = []
        for event in stream:
            kinds.append(event.type)
            if event.type == "response.output_text.delta":
                deltas.append(event.delta)
        final = stream.get_final_response()
    assert deltas == ["answer ", "from ", "alpha"]
    assert final.output_text == "answer from alpha"
    assert final.status == "completed"
    assert final.usage is not None
    assert final.usage.output_tokens == COMPLETION_TOKENS
    assert kinds[:4] == ["response.created", "response.in_progress",
                         "response.output_item.added", "response.content_part.added"]  # fmt: skip
    assert kinds[-4:] == ["response.output_text.done", "response.content_part.done",
                          "response.output_item.done", "response.completed"]  # fmt: skip


def test_a_streamed_function_call(shared_gateway: Server) -> None:
    """A streamed tool call is a function_call item whose arguments come as deltas."""
    created = client(shared_gateway).responses.create(
        model="alpha", input="Weather?", tools=[WEATHER], stream=True
    )
    events = list(created)
    deltas = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    assert "".join(deltas) == TOOL_ARGUMENTS
    done = [e for e in events if e.type == "response.function_call_arguments.done"]
    assert [e.arguments for e in done] == [TOOL_ARGUMENTS]
    completed = events[-1]
    assert completed.type == "response.completed"
    [item] = completed.response.output
    assert item.type == "function_call"
    assert (item.name, item.call_id, item.status) == ("weather", "call_alpha", "completed")
    assert [e.sequence_number for e in events] == list(range(len(events)))


def test_a_routed_request_falls_back_and_says_how(shared_gateway: Server) -> None:
    """``route:audit`` takes the chat route's path: beta fails, gamma times out, alpha
    answers; the routing headers say so."""
    raw = client(shared_gateway).responses.with_raw_response.create(model="route:audit", input="Hi")
    assert raw.parse().output_text == "answer from alpha"
    assert raw.headers["x-agentladder-agent"] == "alpha"
    assert raw.headers["x-agentladder-task-type"] == "audit"


def test_the_client_budget_is_charged(gateway: Server) -> None:
    """team-a's budget is charged for a Response as for a chat completion: 11 input
    tokens at $1/Mtok and 7 output tokens at $2/Mtok (a fresh gateway: nothing spent
    before)."""
    openai_client = client(gateway)
    first = openai_client.responses.with_raw_response.create(model="alpha", input="Hi")
    assert first.headers["x-agentladder-budget-spent"] == "0.000000"
    second = openai_client.responses.with_raw_response.create(model="alpha", input="Hi")
    assert second.headers["x-agentladder-budget-spent"] == "0.000025"
    assert second.headers["x-agentladder-budget-limit"] == "5.000000"


def test_previous_response_id_is_refused(shared_gateway: Server) -> None:
    """The gateway keeps no response: ``previous_response_id`` is a 400 naming it."""
    with pytest.raises(openai.BadRequestError) as refused:
        client(shared_gateway).responses.create(
            model="alpha", input="Again", previous_response_id="resp_123"
        )
    error = refused.value.body
    assert isinstance(error, dict)
    assert error["param"] == "previous_response_id"
    assert "needs stored responses, which this gateway does not keep" in error["message"]
    assert "send the conversation in input" in error["message"]


def test_an_unsupported_tool_type_is_refused(shared_gateway: Server, providers: Providers) -> None:
    """A tool other than a function is a 400 naming its type; nothing is forwarded."""
    before = len(providers.seen())
    with pytest.raises(openai.BadRequestError) as refused:
        client(shared_gateway).responses.create(
            model="alpha", input="Search", tools=[{"type": "web_search"}]
        )
    error = refused.value.body
    assert isinstance(error, dict)
    assert error["param"] == "tools[0].type"
    assert "tool type web_search is not supported" in error["message"]
    assert len(providers.seen()) == before


def test_an_unknown_model_and_no_token_are_the_chat_routes_errors(shared_gateway: Server) -> None:
    """404 ``model_not_found`` and 401 as on the chat route."""
    with pytest.raises(openai.NotFoundError) as unknown:
        client(shared_gateway).responses.create(model="nobody-at-all", input="Hi")
    assert isinstance(unknown.value.body, dict)
    assert unknown.value.body["code"] == "model_not_found"
    with pytest.raises(openai.AuthenticationError):
        client(shared_gateway, token="wrong-" + CLIENT).responses.create(model="alpha", input="Hi")


def test_a_broken_stream_ends_in_response_failed(shared_gateway: Server) -> None:
    """epsilon's stream breaks after one piece: the events end with ``error`` and
    ``response.failed``, its text so far kept."""
    events = list(client(shared_gateway).responses.create(model="epsilon", input="Hi", stream=True))
    assert [e.type for e in events[-2:]] == ["error", "response.failed"]
    failed = events[-1]
    assert failed.type == "response.failed"
    assert failed.response.status == "failed"
    [item] = failed.response.output
    assert item.type == "message"
    assert item.status == "incomplete"
    assert [part.text for part in item.content if part.type == "output_text"] == ["answer "]


def test_feedback_on_a_response_is_about_its_agent(shared_gateway: Server) -> None:
    """A Response's contract id takes feedback as a chat completion's does: a judgment of
    the agent that answered, by ``feedback:team-a``."""
    raw = client(shared_gateway).responses.with_raw_response.create(model="alpha", input="Hi")
    given = httpx.post(
        shared_gateway.url("/v1/feedback"), headers={"Authorization": f"Bearer {CLIENT}"},
        json={"contract_id": raw.headers["x-agentladder-contract"], "score": 9}, timeout=10,
    )  # fmt: skip
    assert given.status_code == 200, given.text
    assert given.json()["agent_id"] == "alpha"
    assert given.json()["judge"] == "feedback:team-a"
