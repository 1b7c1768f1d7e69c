"""Checks and feedback as OpenAI's own client sees them: `agentladder serve` on loopback
in front of the local providers (``provider.py``), with a local judge there
(``judge:<score>``), on SQLite, stopped and started again."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from tests.gateway.provider import Providers
from tests.served import Server, start_server

TOKEN = "team-a-token-0123456789"
ASK: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Which controls matter?"}]


def config(base_url: str) -> str:
    """alpha behind the gateway, judged by the local judge that scores 8."""
    return f"""
api:
  tokens:
    - {{role: client, token: {TOKEN}, name: team-a}}
gateway:
  judge:
    backend: {{kind: openai, base_url: "{base_url}", model: "judge:8"}}
    name: local-judge
    input_price_per_mtok: 1.0
    output_price_per_mtok: 2.0
    rubrics: {{support: "Does the answer solve the customer's problem?"}}
agents:
  - name: alpha
    model_name: alpha-model
    backend: {{kind: openai, base_url: "{base_url}", model: "good:alpha",
               api_key_env: GW_KEY_ALPHA}}
"""


def profile(server: Server) -> dict[str, Any]:
    """alpha's Oracle profile."""
    found: dict[str, Any] = httpx.get(server.url("/oracle/profiles/alpha"), timeout=10).json()
    return found


def test_a_check_lands_and_feedback_outlives_a_restart(
    tmp_path: Path, providers: Providers, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rookie's answer at ``support`` is checked (``yes``): the local judge's 8 lands as
    alpha's judgment there (XP, a task judged) and in /metrics; after the server is stopped
    and started again on its database, the caller's thumbs up on that contract is skill
    evidence by ``feedback:team-a`` about alpha (no judged task, no XP)."""
    monkeypatch.setenv("GW_KEY_ALPHA", "sk-alpha-secret")
    text = config(providers.base_url)
    server = start_server(tmp_path, text)
    try:
        with openai.OpenAI(
            base_url=server.url("/v1"), api_key=TOKEN, max_retries=0, timeout=30
        ) as client:
            raw = client.chat.completions.with_raw_response.create(
                model="alpha", messages=ASK, extra_headers={"x-agentladder-task-type": "support"}
            )
        assert raw.parse().choices[0].message.content == "answer from alpha"
        assert raw.headers["x-agentladder-check"] == "yes"
        contract = raw.headers["x-agentladder-contract"]
        deadline = time.monotonic() + 30
        while "support" not in profile(server)["specializations"]:
            assert time.monotonic() < deadline, server.output()[-3000:]
            time.sleep(0.1)
        support = profile(server)["specializations"]["support"]
        assert support["tasks_judged"] == 1
        assert support["xp"] > 0
        judged = [s for s in providers.seen() if s["model"] == "judge:8"]
        assert "answer from alpha" in judged[-1]["messages"][1]["content"]
        assert "solve the customer's problem" in judged[-1]["messages"][1]["content"]
        metrics = httpx.get(server.url("/metrics"), timeout=10).text
        passed = (
            'agentladder_gateway_checks_total{agent="alpha",outcome="passed",task_type="support"}'
        )
        assert f"{passed} 1.0" in metrics
        spent = 'agentladder_gateway_judge_cost_dollars_total{judge="gateway-judge:local-judge"}'
        assert spent in metrics
    finally:
        server.stop()
    again = start_server(tmp_path, text)
    try:
        answer = httpx.post(
            again.url("/v1/feedback"), headers={"Authorization": f"Bearer {TOKEN}"},
            json={"contract_id": contract, "thumbs": "up"}, timeout=10,
        )  # fmt: skip
        assert answer.status_code == 200, answer.text
        assert answer.json()["agent_id"] == "alpha"
        assert answer.json()["judge"] == "feedback:team-a"
        assert answer.json()["xp_awarded"] == 0
        assert profile(again)["specializations"]["support"]["tasks_judged"] == 1  # no XP lever
    finally:
        again.stop()
