"""The baseline of the gateway benchmark: a bare httpx reverse proxy, the least a Python
service can do to stream a chat completion from a provider to its caller.

``POST /v1/chat/completions``: the body sent on unchanged to ``BARE_UPSTREAM`` (the
provider's ``.../chat/completions``) through one pooled ``httpx.AsyncClient``, the answer
relayed chunk by chunk as it comes. No authentication, routing, checks or records.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

_limits = httpx.Limits(max_connections=256, max_keepalive_connections=128, keepalive_expiry=2.0)
"""A connection idle for 2 s is not reused: the provider (uvicorn) closes its own after 5 s,
and a request sent on one as it closes fails (a 500 here, which stops the benchmark)."""
_client = httpx.AsyncClient(limits=_limits, timeout=60)


async def _completions(request: Request) -> Response:
    upstream = _client.build_request(
        "POST", os.environ["BARE_UPSTREAM"], content=await request.body(),
        headers={"content-type": "application/json"},
    )  # fmt: skip
    response = await _client.send(upstream, stream=True)

    async def relay() -> AsyncIterator[bytes]:
        try:
            async for chunk in response.aiter_bytes():
                yield chunk
        finally:
            await response.aclose()

    kind = response.headers.get("content-type", "application/json")
    return StreamingResponse(relay(), status_code=response.status_code, media_type=kind)


app = Starlette(routes=[Route("/v1/chat/completions", _completions, methods=["POST"])])
