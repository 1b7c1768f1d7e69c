"""Local OpenAI-compatible providers for the gateway's tests, in their own OS process.

Run as a script (``python provider.py PORT``), it serves ``POST /v1/chat/completions``
with uvicorn on 127.0.0.1:PORT until SIGTERM. The request's ``model`` (the agent's
``backend.model``) says how it behaves, ``<behaviour>:<argument>``:

- ``good:<name>``: answers ``"answer from <name>"`` (streamed in three pieces with
  ``stream: true``, then ``usage`` when ``stream_options.include_usage``), usage 11 prompt
  and 7 completion tokens;
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
- ``judge:<score>``: a judge's verdict, ``{"score": <score>, "reason": "..."}`` as the
  answer's content (usage 11 and 7 tokens); ``judge:<score>:<ms>``: the same after ``ms``
  milliseconds.
- ``budgetusage:<ms>``: a good answer after ``ms`` milliseconds whose usage is 0 prompt
  tokens and as many completion tokens as the request's ``max_tokens`` (7 without it);
- ``budgetdrip:<pieces>``: a stream of ``pieces`` pieces of ``"word "`` (5 characters), one
  every 50 ms, with no usage, then ``[DONE]``.

``GET /seen`` lists every request received: its model, Authorization header and stream
flag. ``Providers`` starts it, reads ``/seen`` and stops it by its pid.
"""

from __future__ import annotations

import asyncio
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


def app() -> Starlette:
    """The Starlette app."""
    seen: list[dict[str, Any]] = []

    async def stream(name: str, usage: bool, broken: bool) -> AsyncIterator[bytes]:
        yield _chunk(name, {"role": "assistant", "content": ""})
        for piece in ("answer ", "from ", name):
            yield _chunk(name, {"content": piece})
            if broken:
                raise RuntimeError("the stream breaks here")  # uvicorn closes the connection
            await asyncio.sleep(0.01)
        yield _chunk(name, {}, "stop")
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
             "stream": streamed, "messages": body.get("messages"), "extra": body.get("user")}
        )  # fmt: skip
        behaviour, _, argument = model.partition(":")
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
        if behaviour == "slow":
            await asyncio.sleep(float(argument) / 1000)
            argument = "slow"
        if streamed:
            include = bool((body.get("stream_options") or {}).get("include_usage"))
            kind = "application/json" if behaviour == "mislabelled" else "text/event-stream"
            return StreamingResponse(
                stream(argument, include, behaviour == "break"), media_type=kind
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
