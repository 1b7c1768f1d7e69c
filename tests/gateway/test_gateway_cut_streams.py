"""What went out is charged and checked, whether or not the caller read to the end:
`agentladder serve` on loopback, OpenAI's client stopping each stream at its
``finish_reason`` (``linger:`` keeps the provider's end 3 s behind it)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from agentladder.services.gateway.service import CUT_NOTE
from tests.gateway.provider import Providers
from tests.served import Server, start_server

TOKEN = "team-a-token-0123456789"
ASK: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Which controls matter?"}]
STREAMS = 10


def config(base_url: str) -> str:
    """alpha behind the gateway (its streams linger after finish_reason), a judge scoring
    8, and a client with a budget."""
    return f"""
api:
  tokens:
    - {{role: client, token: {TOKEN}, name: team-a, budget: {{limit_usd: 5, period: day}}}}
gateway:
  judge:
    backend: {{kind: openai, base_url: "{base_url}", model: "judge:8"}}
    name: local-judge
agents:
  - name: alpha
    model_name: alpha-model
    input_price_per_mtok: 1000.0
    output_price_per_mtok: 2000.0
    backend: {{kind: openai, base_url: "{base_url}", model: "linger:alpha",
               api_key_env: GW_KEY_ALPHA}}
"""


def metric(server: Server, start: str) -> float:
    """The sum of the /metrics samples whose line starts with ``start``."""
    text = httpx.get(server.url("/metrics"), timeout=10).text
    return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(start))


def profile(server: Server) -> dict[str, Any]:
    """alpha's Oracle profile."""
    found: dict[str, Any] = httpx.get(server.url("/oracle/profiles/alpha"), timeout=10).json()
    return found


def test_streams_dropped_at_finish_reason_are_charged_and_checked(
    tmp_path: Path, providers: Providers, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ten streams read to their ``finish_reason`` and dropped: each is charged (the
    provider's cost in /metrics and the client's spend move by ten answers' worth), each
    counted ``cancelled``, and every promised check runs on the text that went out, the
    judge told where the stream ended."""
    monkeypatch.setenv("GW_KEY_ALPHA", "sk-alpha-secret")
    server = start_server(tmp_path, config(providers.base_url))
    try:
        with openai.OpenAI(
            base_url=server.url("/v1"), api_key=TOKEN, max_retries=0, timeout=30
        ) as client:
            checked = 0
            for _ in range(STREAMS):
                stream = client.chat.completions.create(
                    model="alpha", messages=ASK, stream=True,
                    extra_headers={"x-agentladder-task-type": "support"},
                )  # fmt: skip
                text = ""
                for chunk in stream:
                    if chunk.choices and chunk.choices[0].delta.content:
                        text += chunk.choices[0].delta.content
                    if chunk.choices and chunk.choices[0].finish_reason:
                        break
                checked += stream.response.headers["x-agentladder-check"] == "yes"
                stream.close()
                assert text == "answer from alpha"
        assert checked >= 1  # a rookie's first answers are all checked
        deadline = time.monotonic() + 60
        while profile(server)["specializations"].get("support", {}).get("tasks_judged") != checked:
            assert time.monotonic() < deadline, server.output()[-3000:]
            time.sleep(0.2)
        judged = [s for s in providers.seen() if s["model"] == "judge:8"]
        assert len(judged) >= checked
        shown = [s["messages"][1]["content"] for s in judged[-checked:]]
        assert all("answer from alpha" in m and CUT_NOTE in m for m in shown)
        assert (
            metric(server, 'agentladder_gateway_requests_total{agent="alpha",outcome="cancelled"')
            == STREAMS
        )
        cost = metric(server, 'agentladder_provider_cost_dollars_total{agent="alpha"')
        day = 'agentladder_gateway_client_spend_dollars{client="team-a",period="day"'
        wait_for_spend = time.monotonic() + 30  # a budget's spend is read back each second
        while metric(server, day) < cost * 0.999 and time.monotonic() < wait_for_spend:
            time.sleep(0.2)
        spent = metric(server, day)
        # each answer: the prompt's estimate and "answer from alpha" (17 chars, 4 tokens)
        assert cost > 0.0
        assert spent == pytest.approx(cost, rel=1e-6)
        assert cost >= STREAMS * 4 * 2000.0 / 1e6
    finally:
        server.stop()
