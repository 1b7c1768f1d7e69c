"""A judge for the gateway's checks, in-process: an OpenAI-compatible endpoint (a Starlette
app behind httpx's ASGI transport) whose score and readiness the test holds.

``Judging.score`` is what it answers (``{"score": ..., "reason": ...}``); while
``Judging.release`` is not set it waits before answering (a judge slower than any
request); ``Judging.status`` other than 200 answers that error. ``Judging.asked`` counts
the calls that arrived, ``Judging.seen`` keeps their bodies. ``install`` makes it the
gateway's judge.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agentladder.providers.openai import OpenAIProvider
from agentladder.providers.settings import OpenAISettings
from agentladder.services.container import Services

__all__ = ["Judging", "gateway_config"]


class Judging:
    """The judge's behaviour, set by the test."""

    def __init__(self, score: float = 9.0) -> None:
        self.score = score
        self.status = 200
        self.release = asyncio.Event()
        self.release.set()
        self.asked = 0
        self.seen: list[dict[str, Any]] = []

    def app(self) -> Starlette:
        """The endpoint: ``POST /v1/chat/completions``."""

        async def completions(request: Request) -> Response:
            body = await request.json()
            self.asked += 1
            self.seen.append(body)
            await self.release.wait()
            if self.status != 200:
                return JSONResponse({"error": {"message": "judge down"}}, status_code=self.status)
            verdict = json.dumps({"score": self.score, "reason": "as the test set it"})
            return JSONResponse(
                {
                    "id": "judge-1", "object": "chat.completion", "created": 1, "model": "j",
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": verdict}}],
                    "usage": {"prompt_tokens": 1000, "completion_tokens": 100,
                              "total_tokens": 1100},
                }
            )  # fmt: skip

        return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])

    def install(self, services: Services) -> None:
        """Make this the gateway's judge (its provider over the ASGI transport)."""
        checks = services.gateway.checks
        assert checks is not None
        assert checks.prices is not None
        transport = httpx.ASGITransport(app=self.app())
        client = httpx.AsyncClient(transport=transport)
        settings = OpenAISettings(base_url="http://judge.test/v1", model="j", timeout_s=600)
        checks.judge = OpenAIProvider(checks.prices, settings, client=client)


def gateway_config(base_url: str, **judge: Any) -> dict[str, Any]:
    """Agents alpha and bravo on the local providers at ``base_url`` and a backend judge
    (replaced by ``Judging.install``), priced 1 and 2 dollars per million tokens."""

    def agent(name: str) -> dict[str, Any]:
        return {
            "name": name, "model_name": f"{name}-model",
            "backend": {"kind": "openai", "base_url": base_url, "model": f"good:{name}",
                        "api_key_env": f"GW_KEY_{name.upper()}"},
        }  # fmt: skip

    settings = {
        "backend": {"kind": "openai", "base_url": "http://judge.test/v1", "model": "j"},
        "name": "referee", "input_price_per_mtok": 1.0, "output_price_per_mtok": 2.0,
        "rubrics": {"audit": "Name the controls that matter."}, "pass_scores": {"audit": 7.0},
        **judge,
    }  # fmt: skip
    return {
        "agents": [agent("alpha"), agent("bravo")],
        "gateway": {"judge": settings},
        "api": {"shutdown_grace_s": 1},
    }
