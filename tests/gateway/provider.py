"""Local OpenAI-compatible providers for the gateway's tests, in their own OS process.

Run as a script (``python provider.py PORT``), it serves ``POST /v1/chat/completions``
with uvicorn on 127.0.0.1:PORT until SIGTERM. The request's ``model`` (the agent's
``backend.model``) says how it behaves, ``<behaviour>:<argument>``:

- ``good:<name>``: answers ``"answer from <name>"`` (streamed in three pieces with
  ``stream: true``, then ``usage`` when ``stream_options.include_usage``), usage 11 prompt
  and 7 completion tokens; a request with ``tools`` is answered with a call of the first
  one (arguments ``{"city": "Paris"}``, call id ``call_<name>``), and once the last message
  is that call's output (a ``tool`` message), with ``"answer from <name>: <output>"``;
- ``fail:<name>``: HTTP 500 with an OpenAI-style error body;
- ``slow:<ms>``: a good answer after ``ms`` milliseconds (before the stream's first byte);
- ``ratelimit:<seconds>``: HTTP 429 with ``Retry-After``;
- ``break:<name>``: a stream that sends one piece, then closes the connection;
- ``reject:<name>``: HTTP 400, the request refused (``context_length_exceeded``, param
  ``messages``);
- ``errorbody:<name>``: HTTP 200 with an error object for a body;
- ``empty:<name>``: HTTP 200, a chat completion without choices;
- ``plain:<name>``: a good answer as one JSON body, also when asked to stream;
- ``errorevent:<name>``: a stream whose first event is an error (no stream: a good answer);
- ``midevent:<name>``: a stream that sends one piece, then an error event, then ends;
- ``notsse:<name>``: an answer labelled ``text/event-stream`` whose lines are not events;
- ``mislabelled:<name>``: a good stream labelled ``application/json``, and a good
  non-streamed answer labelled ``text/event-stream``;
- ``linger:<name>``: a good answer; streamed, 3 s pass between the chunk with
  ``finish_reason`` and the rest (usage, ``[DONE]``);
- ``judge:<score>``: a judge's verdict, ``{"score": <score>, "reason": "..."}`` as the
  answer's content (usage 11 and 7 tokens); ``judge:<score>:<ms>``: the same after ``ms``
  milliseconds;
- ``streamline:<name>``: a stream that sends one piece, then one line without a newline,
  1 KiB every 10 ms, without end;
- ``streamspace:<name>``: a stream of whitespace (spaces and newlines), 64 KiB every
  10 ms, without end and without an event;
- ``streamendless:<name>``: a stream of valid pieces without end;
- ``streamdrip:<name>``: a stream of one valid piece a second, without end;
- ``streamoptions:<name>``: 400 naming ``stream_options`` when the request has it (as
  older servers refuse it), else a good answer without usage;
- ``streamtool:<name>``: a stream answering with a tool call of 200,000 characters of
  arguments, without usage whatever the request asks;
- ``sharehold:<seconds>``: a stream that sends its first piece at once, then holds the
  response open for ``seconds`` (at most 60) before it ends (no stream: a good answer);
- ``secretecho:<name>``: HTTP 401 whose message echoes what a careless server echoes:
  ``Incorrect API key provided: <the key>`` (the Authorization header's credential), the
  whole header, the user and password of a basic credential, the request's query string,
  and ``SECRET_LOOKING`` (key-looking strings of no configuration);
- ``budgetusage:<ms>``: a good answer after ``ms`` milliseconds whose usage is 0 prompt
  tokens and as many completion tokens as the request's ``max_tokens`` (7 without it);
- ``budgetdrip:<pieces>``: a stream of ``pieces`` pieces of ``"word "`` (5 characters), one
  every 50 ms, with no usage, then ``[DONE]``;
- ``parrot:<name>``: a classifier: answers the word after ``ANSWER=`` in the last
  message's text (``"none"`` without one) as its whole content, usage 11 and 7 tokens; HTTP
  500 when that word is ``500``.

The endless ones stop by themselves after 10 minutes or 64 MiB, whichever comes first.

``GET /seen`` lists every request received: its model, Authorization header, stream
flag and ``stream_options``. ``Providers`` starts it, reads ``/seen`` and stops it by its pid.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

__all__ = ["Providers"]

PROMPT_TOKENS = 11
COMPLETION_TOKENS = 7
SECRET_LOOKING = ("sk-proj-Zz0123456789abcdefGHIJ", "AKIAIOSFODNN7EXAMPLE")
"""What ``secretecho`` adds to its message: key shapes no configuration holds."""


def _completion(name: str) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{name}",
        "object": "chat.completion",
        "created": 1,
        "model": name,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": f"answer from {name}"},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": PROMPT_TOKENS,
            "completion_tokens": COMPLETION_TOKENS,
            "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS,
        },
    }


def _chunk(name: str, delta: dict[str, Any], finish: str | None = None) -> bytes:
    event = {
        "id": f"chatcmpl-{name}",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": name,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(event).encode() + b"\n\n"


def _error_event(message: str) -> bytes:
    error: dict[str, str | None] = {
        "message": message,
        "type": "server_error",
        "param": None,
        "code": None,
    }
    return b"data: " + json.dumps({"error": error}).encode() + b"\n\n"


TOOL_ARGUMENTS = '{"city": "Paris"}'


def _tooling(name: str, body: dict[str, Any], streamed: bool) -> Response | None:
    """``good`` asked with ``tools``: a call of the first, or the answer after its output."""
    tools = body.get("tools") or []
    if not tools:
        return None
    last = (body.get("messages") or [{}])[-1]
    if last.get("role") == "tool":
        completion = _completion(name)
        completion["choices"][0]["message"]["content"] = f"answer from {name}: {last['content']}"
        if not streamed:
            return JSONResponse(completion)
        text = completion["choices"][0]["message"]["content"]
        pieces = [_chunk(name, {"role": "assistant", "content": text}), _chunk(name, {}, "stop")]
    else:
        call: dict[str, Any] = {
            "id": f"call_{name}",
            "type": "function",
            "function": {"name": tools[0]["function"]["name"], "arguments": TOOL_ARGUMENTS},
        }
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        completion = _completion(name)
        completion["choices"][0].update(message=message, finish_reason="tool_calls")
        if not streamed:
            return JSONResponse(completion)
        start = {**call, "index": 0, "function": {**call["function"], "arguments": ""}}
        pieces = [_chunk(name, {"role": "assistant", "content": None, "tool_calls": [start]})]
        for half in (TOOL_ARGUMENTS[:8], TOOL_ARGUMENTS[8:]):
            pieces.append(
                _chunk(name, {"tool_calls": [{"index": 0, "function": {"arguments": half}}]})
            )
        pieces.append(_chunk(name, {}, "tool_calls"))
    usage = {
        "id": f"chatcmpl-{name}",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": name,
        "choices": [],
        "usage": completion["usage"],
    }
    pieces += [b"data: " + json.dumps(usage).encode() + b"\n\n", b"data: [DONE]\n\n"]
    return StreamingResponse(iter(pieces), media_type="text/event-stream")


def _misbehaving(behaviour: str, name: str, streamed: bool) -> Response | None:
    """The answer of a provider that misbehaves (the module's list), else None."""
    if behaviour == "reject":
        error = {"message": "This model's maximum context length is 8 tokens",
                 "type": "invalid_request_error", "param": "messages",
                 "code": "context_length_exceeded"}  # fmt: skip
        return JSONResponse({"error": error}, status_code=400)
    if behaviour == "errorbody" or (behaviour == "errorevent" and not streamed):
        overloaded = {"message": f"{name} is overloaded", "type": "server_error", "code": None}
        return JSONResponse({"error": overloaded})
    if behaviour == "empty":
        return JSONResponse({**_completion(name), "choices": []})
    if behaviour == "plain":
        return JSONResponse(_completion(name))
    if behaviour == "mislabelled" and not streamed:
        return Response(json.dumps(_completion(name)), media_type="text/event-stream")
    if behaviour == "notsse":
        return Response(b"oops, this is not an event stream\n", media_type="text/event-stream")
    if streamed and behaviour == "errorevent":
        pieces = [_error_event(f"{name} failed at once"), b"data: [DONE]\n\n"]
        return StreamingResponse(iter(pieces), media_type="text/event-stream")
    if streamed and behaviour == "midevent":
        pieces = [_chunk(name, {"role": "assistant", "content": "answer "}),
                  _error_event(f"{name} failed midway")]  # fmt: skip
        return StreamingResponse(iter(pieces), media_type="text/event-stream")
    return None


_ENDLESS_S = 600.0
_ENDLESS_BYTES = 64 * 1024 * 1024


async def _endless(piece: bytes, pause_s: float, first: bytes = b"") -> AsyncIterator[bytes]:
    """``first``, then ``piece`` every ``pause_s`` until 10 minutes or 64 MiB have gone."""
    if first:
        yield first
    ends, sent = time.monotonic() + _ENDLESS_S, 0
    while time.monotonic() < ends and sent < _ENDLESS_BYTES:
        yield piece
        sent += len(piece)
        await asyncio.sleep(pause_s)


def _stream_hostile(behaviour: str, name: str, body: dict[str, Any]) -> Response | None:
    """The ``stream...`` behaviours of the module's list, and ``good`` asked with tools;
    else None."""
    sse = "text/event-stream"
    if behaviour == "streamline":
        start = _chunk(name, {"role": "assistant", "content": "answer "})
        line = b'data: {"choices": [{"index": 0, "delta": {"content": "'
        return StreamingResponse(_endless(b"x" * 1024, 0.01, start + line), media_type=sse)
    if behaviour == "streamspace":
        return StreamingResponse(_endless(b" \n" * 32_768, 0.01), media_type=sse)
    if behaviour == "streamendless":
        piece = _chunk(name, {"content": "more "}) * 50
        return StreamingResponse(_endless(piece, 0), media_type=sse)
    if behaviour == "streamdrip":
        return StreamingResponse(_endless(_chunk(name, {"content": "drop "}), 1.0), media_type=sse)
    if behaviour == "streamoptions" and "stream_options" in body:
        error = {"message": "Unrecognized request argument supplied: stream_options",
                 "type": "invalid_request_error", "param": None, "code": None}  # fmt: skip
        return JSONResponse({"error": error}, status_code=400)
    if behaviour == "streamoptions":
        pieces = [_chunk(name, {"role": "assistant", "content": f"answer from {name}"}),
                  _chunk(name, {}, "stop"), b"data: [DONE]\n\n"]  # fmt: skip
        return StreamingResponse(iter(pieces), media_type=sse)
    if behaviour == "streamtool":
        call = {"index": 0, "id": "call_1", "type": "function",
                "function": {"name": "save", "arguments": "a" * 200_000}}  # fmt: skip
        pieces = [_chunk(name, {"role": "assistant", "content": None, "tool_calls": [call]}),
                  _chunk(name, {}, "tool_calls"), b"data: [DONE]\n\n"]  # fmt: skip
        return StreamingResponse(iter(pieces), media_type=sse)
    if behaviour == "good":
        return _tooling(name, body, bool(body.get("stream", False)))
    return None


async def _held(seconds: float) -> AsyncIterator[bytes]:
    """A stream held open: its first piece, ``seconds`` (at most 60) of nothing, its end."""
    yield _chunk("sharehold", {"role": "assistant", "content": "held "})
    await asyncio.sleep(min(seconds, 60.0))
    yield _chunk("sharehold", {}, "stop")
    yield b"data: [DONE]\n\n"


def _secret_echo(request: Request) -> Response:
    """``secretecho``: a 401 echoing the caller's credential, query and key-looking strings."""
    authorization = request.headers.get("authorization", "")
    scheme, _, credential = authorization.partition(" ")
    said = f"Incorrect API key provided: {credential}. You sent {authorization!r}"
    if scheme.lower() == "basic":
        said += f" (user and password {base64.b64decode(credential).decode()!r})"
    said += f"; query {request.url.query!r}; keys on file: {', '.join(SECRET_LOOKING)}"
    error = {"message": said, "type": "invalid_request_error", "code": "invalid_api_key"}
    return JSONResponse({"error": error}, status_code=401)


async def _budget(behaviour: str, argument: str, body: dict[str, Any]) -> Response | None:
    """The answer of the budgets' behaviours (the module's list), else None."""
    if behaviour == "budgetusage":
        await asyncio.sleep(float(argument) / 1000)
        completion = _completion("budget")
        made = body.get("max_tokens") or COMPLETION_TOKENS
        completion["usage"] = {"prompt_tokens": 0, "completion_tokens": made,
                               "total_tokens": made}  # fmt: skip
        return JSONResponse(completion)
    if behaviour == "budgetdrip":

        async def drip() -> AsyncIterator[bytes]:
            yield _chunk("drip", {"role": "assistant", "content": ""})
            for _ in range(int(argument)):
                yield _chunk("drip", {"content": "word "})
                await asyncio.sleep(0.05)
            yield b"data: [DONE]\n\n"

        return StreamingResponse(drip(), media_type="text/event-stream")
    return None


def _parrot(body: dict[str, Any]) -> Response:
    """``parrot``: the word after ``ANSWER=`` in the last message, as the answer."""
    messages = body.get("messages") or [{}]
    text = str(messages[-1].get("content", ""))
    _, found, rest = text.partition("ANSWER=")
    word = rest.split()[0] if found and rest.split() else "none"
    if word == "500":
        error = {"message": "the classifier is broken", "type": "server_error", "code": None}
        return JSONResponse({"error": error}, status_code=500)
    completion = _completion("parrot")
    completion["choices"][0]["message"]["content"] = word
    return JSONResponse(completion)


def app() -> Starlette:
    """The Starlette app."""
    seen: list[dict[str, Any]] = []

    async def stream(
        name: str, usage: bool, broken: bool, linger: bool = False
    ) -> AsyncIterator[bytes]:
        yield _chunk(name, {"role": "assistant", "content": ""})
        for piece in ("answer ", "from ", name):
            yield _chunk(name, {"content": piece})
            if broken:
                raise RuntimeError("the stream breaks here")  # uvicorn closes the connection
            await asyncio.sleep(0.01)
        yield _chunk(name, {}, "stop")
        if linger:  # a caller that stops at finish_reason leaves before the end
            await asyncio.sleep(3)
        if usage:
            totals = {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": COMPLETION_TOKENS,
                      "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS}  # fmt: skip
            event = {"id": f"chatcmpl-{name}", "object": "chat.completion.chunk", "created": 1,
                     "model": name, "choices": [], "usage": totals}  # fmt: skip
            yield b"data: " + json.dumps(event).encode() + b"\n\n"
        yield b"data: [DONE]\n\n"

    async def completions(request: Request) -> Response:
        body = await request.json()
        model = str(body.get("model"))
        streamed = bool(body.get("stream", False))
        seen.append(
            {"model": model, "authorization": request.headers.get("authorization"),
             "stream": streamed, "messages": body.get("messages"), "extra": body.get("user"),
             "stream_options": body.get("stream_options")}
        )  # fmt: skip
        behaviour, _, argument = model.partition(":")
        if behaviour == "secretecho":
            return _secret_echo(request)
        if behaviour == "fail":
            error = {"message": f"{argument} is broken", "type": "server_error", "code": None}
            return JSONResponse({"error": error}, status_code=500)
        if behaviour == "ratelimit":
            headers = {"Retry-After": argument or "30"}
            error = {"message": "slow down", "type": "rate_limit_error", "code": None}
            return JSONResponse({"error": error}, status_code=429, headers=headers)
        misbehaving = _misbehaving(behaviour, argument, streamed)
        if misbehaving is not None:
            return misbehaving
        hostile = _stream_hostile(behaviour, argument, body)
        if hostile is not None:
            return hostile
        budgeted = await _budget(behaviour, argument, body)
        if budgeted is not None:
            return budgeted
        if behaviour == "judge":
            score, _, delay_ms = argument.partition(":")
            await asyncio.sleep(float(delay_ms or 0) / 1000)
            verdict = {"score": float(score), "reason": "a local judge"}
            completion = _completion("judge")
            completion["choices"][0]["message"]["content"] = json.dumps(verdict)
            return JSONResponse(completion)
        if behaviour == "parrot":
            return _parrot(body)
        if behaviour == "sharehold" and streamed:
            return StreamingResponse(_held(float(argument)), media_type="text/event-stream")
        if behaviour == "slow":
            await asyncio.sleep(float(argument) / 1000)
            argument = "slow"
        if streamed:
            include = bool((body.get("stream_options") or {}).get("include_usage"))
            kind = "application/json" if behaviour == "mislabelled" else "text/event-stream"
            return StreamingResponse(
                stream(argument, include, behaviour == "break", behaviour == "linger"),
                media_type=kind,
            )
        return JSONResponse(_completion(argument))

    async def listed(_: Request) -> Response:
        return JSONResponse(seen)

    return Starlette(
        routes=[
            Route("/v1/chat/completions", completions, methods=["POST"]),
            Route("/seen", listed, methods=["GET"]),
        ]
    )


class Providers:
    """The provider process: its base URL (``/v1``), what it saw, its stop."""

    def __init__(self, folder: Path, port: int) -> None:
        self.port = port
        self.log = folder / f"provider-{port}.log"
        with self.log.open("w", encoding="utf-8") as out:
            self.process = subprocess.Popen(
                [sys.executable, str(Path(__file__).resolve()), str(port)],
                stdout=out, stderr=subprocess.STDOUT, text=True,
            )  # fmt: skip
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                httpx.get(f"http://127.0.0.1:{port}/seen", timeout=1)
                return
            except httpx.HTTPError:
                time.sleep(0.05)
        self.stop()
        raise AssertionError(f"the provider did not start: {self.log.read_text()[-2000:]}")

    @property
    def base_url(self) -> str:
        """What an agent's ``backend.base_url`` names."""
        return f"http://127.0.0.1:{self.port}/v1"

    def seen(self) -> list[dict[str, Any]]:
        """Every request received so far."""
        found: list[dict[str, Any]] = httpx.get(f"http://127.0.0.1:{self.port}/seen").json()
        return found

    def stop(self) -> None:
        """SIGTERM by pid, then wait for it."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
