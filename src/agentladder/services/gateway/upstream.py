"""Asking the chosen agent's provider: the caller's body, with the agent's model name and
key, through the provider's own HTTP client (its connection pool).

A non-streamed answer is read whole (``OpenAIProvider.relay``). A streamed one is opened
and read up to its first event before anything goes to the caller: until then a failure
(an error status, a timeout, a connection closed, what ``shapes.py`` refuses) is the
agent's and the next agent may be tried; after that the caller holds part of an answer,
and a failure (or an error event) ends the stream. Every failure is a ``ProviderError``,
as for deliberation calls; a request refused as invalid, ``Rejected``.

Usage comes from the answer's ``usage`` (a stream has it when the caller asked for it
with ``stream_options.include_usage``); when it is missing, four characters per token of
the prompt and of the answer, as ``providers/openai.py`` estimates.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field

import httpx

from agentladder.errors import ProviderError
from agentladder.providers.base import Usage
from agentladder.providers.isolated import isolated
from agentladder.providers.openai import OpenAIProvider, retry_after_s, transport_reason
from agentladder.services.gateway.shapes import (
    as_events,
    completion,
    error_message,
    failed,
    stream_start,
)

__all__ = ["KEEP_CHARS", "Opened", "Tally", "answered", "open_stream", "prompt_tokens"]

_CHARS_PER_TOKEN = 4
KEEP_CHARS = 100_000
"""The most of a streamed answer's text kept for its check (the judge sees less)."""


def prompt_tokens(messages: object) -> int:
    """The prompt's tokens, estimated from its text (four characters per token)."""
    if not isinstance(messages, Sequence):
        return 0
    chars = 0
    for message in messages:
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, str):
            chars += len(content)
        elif isinstance(content, list):
            chars += sum(
                len(str(part.get("text", ""))) for part in content if isinstance(part, Mapping)
            )
    return chars // _CHARS_PER_TOKEN


def _count(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


@dataclass
class Tally:
    """What an answer used: the reported usage, else the characters seen."""

    prompt: int = 0
    chars: int = 0
    reported: Usage | None = None
    text: list[str] | None = None
    """The answer's text, kept (up to ``KEEP_CHARS``) once this is a list: a check's."""

    def see_usage(self, usage: object) -> None:
        """A ``usage`` object of the answer (or of a stream's chunk)."""
        if not isinstance(usage, Mapping):
            return
        given, made = _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
        if given is not None and made is not None:
            self.reported = Usage(input_tokens=given, output_tokens=made)

    def see_choices(self, choices: object, key: str) -> None:
        """The text of ``choices[*][key].content`` (key: message, or delta in a stream)."""
        if not isinstance(choices, list):
            return
        for choice in choices:
            part = choice.get(key) if isinstance(choice, Mapping) else None
            content = part.get("content") if isinstance(part, Mapping) else None
            if isinstance(content, str):
                if self.text is not None and self.chars < KEEP_CHARS:
                    self.text.append(content[: KEEP_CHARS - self.chars])
                self.chars += len(content)

    def usage(self) -> Usage:
        """The reported usage, else the estimate."""
        if self.reported is not None:
            return self.reported
        return Usage(input_tokens=self.prompt, output_tokens=self.chars // _CHARS_PER_TOKEN)


def answered(status: int, body: bytes, retry_after: float | None, tally: Tally) -> None:
    """Check a non-streamed answer: ``ProviderError`` for an error status (``Rejected`` for
    a request refused as invalid) or a body that is not a chat completion
    (``shapes.py``); its usage into ``tally``."""
    if status >= 300:
        raise failed(status, body, retry_after)
    decoded = completion(body)
    tally.see_choices(decoded["choices"], "message")
    tally.see_usage(decoded.get("usage"))


@dataclass
class Opened:
    """A streamed answer begun: the response (closed by ``rest``'s end), its first bytes."""

    response: httpx.Response
    iterator: AsyncIterator[bytes]
    first: bytes
    timeout_s: float
    tally: Tally
    done: bool = False
    """The stream's ``data: [DONE]`` was seen: the answer is whole."""
    error: str | None = None
    """The message of an error event the stream sent (``data: {"error": ...}``), passed on
    to the caller: the answer broke."""
    _pending: bytes = field(default=b"", repr=False)

    def _scan(self, chunk: bytes) -> None:
        """Read the server-sent events' ``data:`` lines for the usage and the text."""
        lines = (self._pending + chunk).split(b"\n")
        self._pending = lines.pop()
        for line in lines:
            data = line.strip()
            if not data.startswith(b"data:"):
                continue
            data = data[5:].strip()
            if data == b"[DONE]":
                self.done = True
            if not data or data == b"[DONE]":
                continue
            try:
                event = json.loads(data)
            except (ValueError, RecursionError):
                continue
            if isinstance(event, Mapping):
                self.error = self.error or error_message(event)
                self.tally.see_choices(event.get("choices"), "delta")
                self.tally.see_usage(event.get("usage"))

    async def rest(self) -> AsyncIterator[bytes]:
        """The first bytes, then every chunk as it comes; ``ProviderError`` when the
        stream fails or stalls for ``timeout_s``. The response is closed at the end, also
        when the caller goes away."""
        iterator = self.iterator
        try:
            self._scan(self.first)
            yield self.first
            while True:
                try:
                    async with asyncio.timeout(self.timeout_s):
                        chunk = await anext(iterator)
                except StopAsyncIteration:
                    break
                except TimeoutError:
                    raise ProviderError(
                        "timeout", f"the stream stalled for {self.timeout_s} s"
                    ) from None
                except httpx.HTTPError as error:
                    broke = f"the stream broke: {transport_reason(error)}"
                    raise ProviderError("http", broke) from error
                self._scan(chunk)
                yield chunk
        finally:
            await self.response.aclose()


async def _nothing() -> AsyncIterator[bytes]:
    return
    yield


async def open_stream(
    provider: OpenAIProvider, payload: Mapping[str, object], tally: Tally
) -> Opened:
    """Open a streamed answer and read its start within ``timeout_s``: up to its first
    event, checked (``shapes.stream_start``), or the whole of a chat completion sent
    instead of a stream (re-sent as one: ``shapes.as_events``). Every failure before then
    is a ``ProviderError`` (the response closed)."""
    timeout = provider.settings.timeout_s
    client = provider.client()
    request = client.build_request(
        "POST", provider.url, json={**payload, "model": provider.model},
        headers=provider.credentials(),
    )  # fmt: skip
    try:
        response = await isolated(client.send(request, stream=True), timeout)
    except (TimeoutError, httpx.TimeoutException):
        raise ProviderError(
            "timeout", f"no answer from {provider.shown_url} in {timeout} s"
        ) from None
    except httpx.HTTPError as error:
        raise ProviderError("http", f"{provider.shown_url}: {transport_reason(error)}") from error
    iterator, first = response.aiter_bytes(), b""
    try:
        async with asyncio.timeout(timeout):
            if response.status_code >= 300:
                body = await _read(iterator, provider.settings.max_response_bytes)
                retry_after = retry_after_s(response.headers.get("retry-after"), time.time())
                raise failed(response.status_code, body, retry_after)
            while not first.strip():
                first += await anext(iterator)
            if _whole_json(first):
                cap = provider.settings.max_response_bytes - len(first)
                body = first + await _read(iterator, cap)
                usage = payload.get("stream_options")
                wanted = isinstance(usage, Mapping) and usage.get("include_usage") is True
                first, iterator = as_events(completion(body), wanted), _nothing()
            else:
                while not stream_start(first):
                    first += await anext(iterator)
    except StopAsyncIteration:
        await response.aclose()
        if not stream_start(first + b"\n"):  # its last line, unended, checked as it is
            raise ProviderError("invalid", "the stream ended before any event") from None
        iterator = _nothing()
    except (TimeoutError, httpx.TimeoutException):
        await response.aclose()
        raise ProviderError(
            "timeout", f"no event from {provider.shown_url} in {timeout} s"
        ) from None
    except httpx.HTTPError as error:
        await response.aclose()
        raise ProviderError("http", f"the stream broke: {transport_reason(error)}") from error
    except BaseException:
        await response.aclose()
        raise
    return Opened(response=response, iterator=iterator, first=first, timeout_s=timeout, tally=tally)


def _whole_json(first: bytes) -> bool:
    """Whether an answer to a stream request is one JSON body, not events: by its first
    byte, whatever its content type says (an event stream's lines begin with a field's
    name or a colon, never a brace), so that a server or a proxy that labels either as the
    other is still read right."""
    return first.lstrip()[:1] in (b"{", b"[")


async def _read(iterator: AsyncIterator[bytes], cap: int) -> bytes:
    """The rest of a body, up to ``cap`` bytes (``max_response_bytes``)."""
    body = bytearray()
    async for chunk in iterator:
        body += chunk
        if len(body) > cap:
            raise ProviderError("http", f"answered more than {cap} bytes; not read further")
    return bytes(body)
