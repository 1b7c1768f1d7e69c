"""``upstream.open_stream`` against httpx's own fake transport: what the gateway sends for
a stream's usage, how a refusal of ``stream_options`` is handled, and a whole stream that
is not closed in time."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from agentladder.domain.agents import AgentConfig
from agentladder.errors import ProviderError, Rejected
from agentladder.providers.openai import OpenAIProvider
from agentladder.providers.settings import OpenAISettings
from agentladder.services.gateway.upstream import Tally, open_stream

ASK = {"model": "x", "messages": [{"role": "user", "content": "hi"}], "stream": True}
STREAM = (
    b'data: {"choices": [{"index": 0, "delta": {"content": "hi"}}]}\n\n'
    b'data: {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 1}}\n\n'
    b"data: [DONE]\n\n"
)
REFUSAL = {"error": {"message": "Unrecognized request argument supplied: stream_options"}}


class _Stalling(httpx.AsyncByteStream):
    """``STREAM``, then nothing for a minute (the connection left open)."""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield STREAM
        await asyncio.sleep(60)


def _provider(
    answer: Callable[[dict[str, Any]], httpx.Response], seen: list[dict[str, Any]]
) -> OpenAIProvider:
    def handle(request: httpx.Request) -> httpx.Response:
        body: dict[str, Any] = json.loads(request.content)
        seen.append(body)
        return answer(body)

    client = httpx.AsyncClient(transport=httpx.MockTransport(handle))
    settings = OpenAISettings(base_url="http://agent.test/v1", model="m", timeout_s=0.5)
    return OpenAIProvider(AgentConfig(name="alpha"), settings, client=client)


async def _read(provider: OpenAIProvider, body: dict[str, Any]) -> tuple[bytes, Tally]:
    tally = Tally()
    opened = await open_stream(provider, body, tally)
    return b"".join([chunk async for chunk in opened.rest()]), tally


def _stream(_: dict[str, Any]) -> httpx.Response:
    return httpx.Response(200, content=STREAM, headers={"content-type": "text/event-stream"})


def test_a_callers_stream_options_that_is_no_object_is_sent_as_it_is() -> None:
    """``stream_options: "yes"`` is the caller's to fix: sent unchanged, nothing added,
    nothing taken out of the answer."""
    seen: list[dict[str, Any]] = []
    provider = _provider(_stream, seen)
    out, _ = asyncio.run(_read(provider, {**ASK, "stream_options": "yes"}))
    assert seen[0]["stream_options"] == "yes"
    assert out == STREAM


def test_the_usage_chunk_is_charged_and_taken_out() -> None:
    """The caller did not ask: the provider was asked, its usage charged, its chunk gone."""
    seen: list[dict[str, Any]] = []
    out, tally = asyncio.run(_read(_provider(_stream, seen), ASK))
    assert seen[0]["stream_options"] == {"include_usage": True}
    assert b'"usage"' not in out
    assert out.endswith(b"data: [DONE]\n\n")
    assert (tally.usage().input_tokens, tally.usage().output_tokens) == (5, 1)


@pytest.mark.parametrize("status", [400, 422])
def test_a_refusal_naming_stream_options_is_asked_once_more_without(status: int) -> None:
    """The provider refuses ``stream_options``: asked again without it (the caller's
    other fields kept), remembered; a refusal of the second request is the caller's."""
    seen: list[dict[str, Any]] = []

    def refuse_options(body: dict[str, Any]) -> httpx.Response:
        if "stream_options" in body:
            return httpx.Response(status, json=REFUSAL)
        return _stream(body)

    provider = _provider(refuse_options, seen)
    out, _ = asyncio.run(_read(provider, {**ASK, "user": "u1"}))
    assert [("stream_options" in body, body["user"]) for body in seen] == [
        (True, "u1"), (False, "u1")
    ]  # fmt: skip
    assert out == STREAM  # nothing added: nothing taken out
    assert provider.stream_usage is False
    asyncio.run(_read(provider, ASK))
    assert len(seen) == 3
    assert "stream_options" not in seen[2]

    refusing = _provider(lambda _: httpx.Response(status, json=REFUSAL), [])
    with pytest.raises(Rejected):
        asyncio.run(_read(refusing, ASK))


def test_a_refusal_that_does_not_name_stream_options_is_not_retried() -> None:
    """Any other 400 is the request's refusal, asked once."""
    seen: list[dict[str, Any]] = []
    refused = {"error": {"message": "context too long"}}
    provider = _provider(lambda _: httpx.Response(400, json=refused), seen)
    with pytest.raises(Rejected):
        asyncio.run(_read(provider, ASK))
    assert len(seen) == 1
    assert provider.stream_usage is True


def test_a_whole_stream_left_open_ends_as_answered() -> None:
    """After ``data: [DONE]`` the provider keeps the connection open past ``timeout_s``:
    the answer is whole, so the stream ends without a failure; without its ``[DONE]`` the
    same stall is a timeout."""

    def stalling(_: dict[str, Any]) -> httpx.Response:
        return httpx.Response(200, stream=_Stalling())

    out, _ = asyncio.run(_read(_provider(stalling, []), ASK))
    assert out.endswith(b"data: [DONE]\n\n")

    class Unfinished(httpx.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            yield STREAM[: STREAM.index(b"data: [DONE]")]
            await asyncio.sleep(60)

    unfinished = _provider(lambda _: httpx.Response(200, stream=Unfinished()), [])
    with pytest.raises(ProviderError, match=r"^timeout: the stream stalled for 0.5 s"):
        asyncio.run(_read(unfinished, ASK))
