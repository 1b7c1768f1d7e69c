"""The gateway with no API tokens configured (the default): a loopback OpenAI client is
answered whatever key it sends, since OpenAI's clients cannot send none."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from openai import OpenAI
from openai.types.chat import ChatCompletionMessageParam

from tests.gateway.provider import Providers
from tests.served import start_server

ASK: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Which controls matter most?"}]


def test_without_tokens_a_loopback_client_needs_no_real_key(
    tmp_path: Path, providers: Providers, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No `api.tokens`: the official client with a made-up key lists the models and is
    answered (it may not send none); elsewhere in the API an unknown token is still 401."""
    monkeypatch.setenv("GW_KEY_ALPHA", "sk-alpha-secret")
    config = f"""
agents:
  - name: alpha
    backend: {{kind: openai, base_url: "{providers.base_url}", model: "good:alpha",
               api_key_env: GW_KEY_ALPHA}}
"""
    server = start_server(tmp_path, config)
    try:
        with OpenAI(base_url=server.url("/v1"), api_key="anything", max_retries=0) as client:
            assert "alpha" in [m.id for m in client.models.list().data]
            answer = client.chat.completions.create(model="alpha", messages=ASK)
        assert answer.choices[0].message.content == "answer from alpha"
        judged = httpx.post(
            server.url("/oracle/judgments"),
            json={"agent_id": "alpha", "contract_id": "c-1", "score": 8.0},
            headers={"Authorization": "Bearer anything"}, timeout=10,
        )  # fmt: skip
        assert judged.status_code == 401
    finally:
        server.stop()
