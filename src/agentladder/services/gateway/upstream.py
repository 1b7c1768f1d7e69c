"""Asking the chosen agent's provider: the caller's body, with the agent's model name and
key, through the provider's own HTTP client (its connection pool).

A non-streamed answer is read whole (``OpenAIProvider.relay``). A streamed one is opened
and read up to its first event before anything goes to the caller: until then a failure
(an error status, a timeout, a connection closed, what ``shapes.py`` refuses, a bound of
``events.py`` passed) is the agent's and the next agent may be tried; after that the
caller holds part of an answer, and a failure (or an error event, or a bound passed: a
line, the stream's bytes, its time ``max_stream_s``) ends the stream. Every failure is a
``ProviderError``, as for deliberation calls; a request refused as invalid, ``Rejected``.

Usage comes from the answer's ``usage``: a stream is asked for it
(``stream_options.include_usage``) whether or not its caller did, and its usage-only chunk
taken out when the caller did not; an endpoint that refuses ``stream_options`` is asked
again once without it and not asked for it again. When usage is missing, it is estimated
(``estimate.py``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass

import httpx

from agentladder.errors import ProviderError
from agentladder.providers.isolated import isolated
from agentladder.providers.openai import OpenAIProvider, retry_after_s, transport_reason
from agentladder.providers.settings import OpenAISettings
from agentladder.services.gateway.estimate import KEEP_CHARS, Tally, prompt_tokens, request_tokens
from agentladder.services.gateway.events import Bounds, EventReader
from agentladder.services.gateway.shapes import REJECTING, as_events, completion, failed

__all__ = [
    "KEEP_CHARS",
    "Opened",
    "Tally",
    "answered",
    "open_stream",
    "prompt_tokens",
    "request_tokens",
]


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
    """A streamed answer begun: the response (closed by ``rest``'s end), its first bytes
    (read and counted: ``rest`` passes them on first), its reader."""

    response: httpx.Response
    iterator: AsyncIterator[bytes]
    first: bytes
    timeout_s: float
    reader: EventReader
    deadline: float
    """When the stream must have ended (``time.monotonic``): its ``max_stream_s``."""
    max_stream_s: float

    @property
    def done(self) -> bool:
        """The stream's ``data: [DONE]`` was seen: the answer is whole."""
        return self.reader.done

    @property
    def error(self) -> str | None:
        """The message of an error event the stream sent (``data: {"error": ...}``), passed
        on to the caller: the answer broke."""
        return self.reader.error

    async def rest(self) -> AsyncIterator[bytes]:
        """The first bytes, then what the reader passes on of every chunk as it comes;
        ``ProviderError`` when the stream fails, stalls for ``timeout_s``, passes a bound
        or runs past ``max_stream_s``. The response is closed at the end, also when the
        caller goes away."""
        try:
            yield self.first
            while (chunk := await self._next()) is not None:
                passed = self.reader.feed(chunk)
                if passed:
                    yield passed
            end = self.reader.close()
            if end:
                yield end
        finally:
            await self.response.aclose()

    async def _next(self) -> bytes | None:
        """The next chunk within ``timeout_s`` and before the deadline; None at the end
        (also when a stream already whole, its ``[DONE]`` read, is not closed in time)."""
        left = self.deadline - time.monotonic()
        try:
            if left <= 0:
                raise TimeoutError
            async with asyncio.timeout(min(self.timeout_s, left)):
                return await anext(self.iterator)
        except StopAsyncIteration:
            return None
        except TimeoutError:
            if self.reader.done:
                return None
            if left <= self.timeout_s:
                raise ProviderError("limit", f"the stream ran past max_stream_s"
                                    f" ({self.max_stream_s} s): cut") from None  # fmt: skip
            raise ProviderError("timeout", f"the stream stalled for {self.timeout_s} s") from None
        except httpx.HTTPError as error:
            raise ProviderError("http", f"the stream broke: {transport_reason(error)}") from error


async def _nothing() -> AsyncIterator[bytes]:
    return
    yield


def _forwarded(
    provider: OpenAIProvider, payload: Mapping[str, object]
) -> tuple[dict[str, object], bool]:
    """The body sent for a stream, and whether the gateway added ``include_usage``: asked
    unless the caller did, or the endpoint refused ``stream_options`` before, or the
    caller's ``stream_options`` is not an object (then the provider answers it)."""
    body: dict[str, object] = {**payload, "model": provider.model}
    given = payload.get("stream_options")
    if given is not None and not isinstance(given, Mapping):
        return body, False
    options = dict(given or {})
    if options.get("include_usage") is True or not provider.stream_usage:
        return body, False
    return {**body, "stream_options": {**options, "include_usage": True}}, True


def _refuses_options(status: int, body: bytes) -> bool:
    """Whether an error answer refuses the request for its ``stream_options``."""
    return status in REJECTING and b"stream_options" in body.lower()


async def _send(provider: OpenAIProvider, body: Mapping[str, object]) -> httpx.Response:
    """The response to ``body``, its status and headers read within ``timeout_s``."""
    timeout = provider.settings.timeout_s
    client = provider.client()
    request = client.build_request("POST", provider.url, json=body,
                                   headers=provider.credentials())  # fmt: skip
    try:
        return await isolated(client.send(request, stream=True), timeout)
    except (TimeoutError, httpx.TimeoutException):
        raise ProviderError(
            "timeout", f"no answer from {provider.shown_url} in {timeout} s"
        ) from None
    except httpx.HTTPError as error:
        raise ProviderError("http", f"{provider.shown_url}: {transport_reason(error)}") from error


async def open_stream(
    provider: OpenAIProvider, payload: Mapping[str, object], tally: Tally
) -> Opened:
    """Open a streamed answer and read its start within ``timeout_s``: up to its first
    event, checked (``events.py``, ``shapes.start_line``), or the whole of a chat
    completion sent instead of a stream (re-sent as one: ``shapes.as_events``). The
    provider is asked for the usage (the module). Every failure before then is a
    ``ProviderError`` (the response closed)."""
    settings = provider.settings
    timeout = min(settings.timeout_s, settings.max_stream_s)
    deadline = time.monotonic() + settings.max_stream_s
    bounds = Bounds(max_line_bytes=settings.max_line_bytes,
                    max_start_bytes=settings.max_start_bytes,
                    max_stream_bytes=settings.max_stream_bytes)  # fmt: skip
    reader = EventReader(tally, bounds)
    try:
        async with asyncio.timeout(timeout):
            response = await _answering(provider, payload, reader)
    except (TimeoutError, httpx.TimeoutException):
        raise ProviderError(
            "timeout", f"no answer from {provider.shown_url} in {timeout} s"
        ) from None
    except httpx.HTTPError as error:
        raise ProviderError("http", f"the answer broke: {transport_reason(error)}") from error
    try:
        async with asyncio.timeout(timeout):
            first, iterator = await _start(response.aiter_bytes(), reader, settings, payload)
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
    return Opened(response=response, iterator=iterator, first=first, timeout_s=timeout,
                  reader=reader, deadline=deadline, max_stream_s=settings.max_stream_s)  # fmt: skip


async def _answering(
    provider: OpenAIProvider, payload: Mapping[str, object], reader: EventReader
) -> httpx.Response:
    """The provider's response with a 2xx status (its body unread), else ``ProviderError``
    (``failed``). An endpoint that refuses ``stream_options`` the gateway added (400, 413
    or 422 naming it) is asked once more without it, and not asked for it again."""
    body, reader.strip_usage = _forwarded(provider, payload)
    response = await _send(provider, body)
    if response.status_code < 300:
        return response
    error = await _error_body(provider, response)
    if reader.strip_usage and _refuses_options(response.status_code, error):
        provider.stream_usage = reader.strip_usage = False  # remembered: not asked again
        response = await _send(provider, _without_usage(body, payload))
        if response.status_code < 300:
            return response
        error = await _error_body(provider, response)
    retry_after = retry_after_s(response.headers.get("retry-after"), time.time())
    raise failed(response.status_code, error, retry_after)


async def _error_body(provider: OpenAIProvider, response: httpx.Response) -> bytes:
    """An error answer's body (up to ``max_response_bytes``), the response closed."""
    try:
        return await _read(response.aiter_bytes(), provider.settings.max_response_bytes)
    finally:
        await response.aclose()


async def _start(
    iterator: AsyncIterator[bytes], reader: EventReader, settings: OpenAISettings,
    payload: Mapping[str, object],
) -> tuple[bytes, AsyncIterator[bytes]]:  # fmt: skip
    """A stream's first bytes, up to its first event (what ``reader`` passes on of them),
    and the iterator of the rest; or a whole chat completion as events (``as_events``)."""
    first = bytearray()
    try:
        lead = bytearray()
        while True:  # whitespace first: read on, up to max_start_bytes
            chunk = await anext(iterator)
            lead += chunk
            if chunk.strip():
                break
            if len(lead) > settings.max_start_bytes:
                raise ProviderError("limit", f"more than max_start_bytes"
                                    f" ({settings.max_start_bytes} bytes) before the stream's"
                                    " first event")  # fmt: skip
        if _whole_json(lead):
            cap = settings.max_response_bytes - len(lead)
            answer = completion(bytes(lead) + await _read(iterator, cap))
            reader.tally.see_choices(answer["choices"], "message")
            reader.tally.see_usage(answer.get("usage"))
            reader.done = True
            usage = payload.get("stream_options")
            wanted = isinstance(usage, Mapping) and usage.get("include_usage") is True
            return as_events(answer, wanted), _nothing()
        first += reader.feed(bytes(lead))
        while not reader.started:
            first += reader.feed(await anext(iterator))
    except StopAsyncIteration:
        first += reader.close()  # its last line, unended, read as it is
        if not reader.started:
            raise ProviderError("invalid", "the stream ended before any event") from None
        return bytes(first), _nothing()
    return bytes(first), iterator


def _without_usage(body: Mapping[str, object], payload: Mapping[str, object]) -> dict[str, object]:
    """``body`` with the caller's own ``stream_options`` (or none), the gateway's gone."""
    again = {key: value for key, value in body.items() if key != "stream_options"}
    if payload.get("stream_options") is not None:
        again["stream_options"] = payload["stream_options"]
    return again


def _whole_json(first: bytes | bytearray) -> bool:
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
