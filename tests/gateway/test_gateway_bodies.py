"""A chat's whole context fits: bodies under /v1/ are bounded by gateway.max_body_bytes."""

from __future__ import annotations

import httpx
import openai
import pytest

from agentladder.config import parse_settings
from agentladder.errors import InvalidInput
from agentladder.services.container import Services
from tests.gateway.conftest import CLIENT, ORCH
from tests.gateway.provider import Providers
from tests.inprocess import call_app
from tests.served import Server

LONG = "A clause of the contract under review, quoted whole. " * 60_000
"""About 3.2 MB: a long document pasted into one message, three times api.max_body_bytes."""


def test_a_context_over_a_mebibyte_reaches_the_agent(
    shared_gateway: Server, providers: Providers
) -> None:
    """A 3 MB message goes through to the agent (the API's own 1 MiB bound answered 413)."""
    with openai.OpenAI(base_url=shared_gateway.url("/v1"), api_key=CLIENT, max_retries=0) as client:
        answer = client.chat.completions.create(
            model="alpha", messages=[{"role": "user", "content": LONG}]
        )
    assert answer.choices[0].message.content == "answer from alpha"
    received = providers.seen()[-1]["messages"]
    assert received == [{"role": "user", "content": LONG}]


def test_the_other_routes_keep_the_api_bound(shared_gateway: Server) -> None:
    """A body of the same size to agentladder's own routes is still 413."""
    body = {"agent_id": "alpha", "contract_id": "long", "score": 8.0, "notes": LONG}
    answer = httpx.post(
        shared_gateway.url("/oracle/judgments"), json=body,
        headers={"Authorization": f"Bearer {ORCH}"}, timeout=30,
    )  # fmt: skip
    assert answer.status_code == 413
    assert answer.json()["error"]["message"] == "the body is over 1048576 bytes"


def test_a_body_over_the_gateway_bound_is_413_naming_it() -> None:
    """Past gateway.max_body_bytes a /v1/ request is refused 413 before any agent is asked."""
    config = {"gateway": {"max_body_bytes": 4096}}
    seen: list[httpx.Response] = []

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        content = "x" * 5000
        seen.append(await client.post(
            "/v1/chat/completions", json={"model": "nobody", "messages": [
                {"role": "user", "content": content}]},
        ))  # fmt: skip
        seen.append(await client.post(
            "/v1/chat/completions", json={"model": "nobody", "messages": [
                {"role": "user", "content": content[:3000]}]},
        ))  # fmt: skip

    call_app(config, body)
    assert seen[0].status_code == 413
    assert seen[0].json()["error"]["message"] == "the body is over 4096 bytes"
    assert seen[1].status_code == 404  # within the bound: it reaches the gateway


def test_a_gateway_bound_over_the_buffered_bound_is_refused() -> None:
    """gateway.max_body_bytes over api.max_buffered_bytes could never be received: refused."""
    with pytest.raises(InvalidInput) as refused:
        parse_settings({"gateway": {"max_body_bytes": 64 * 1024 * 1024}})
    assert refused.value.field == "gateway.max_body_bytes"
    assert "api.max_buffered_bytes (33554432)" in str(refused.value)
