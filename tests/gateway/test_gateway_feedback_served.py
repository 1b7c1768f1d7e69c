"""Feedback is evidence, not a lever, as a client sees it: `agentladder serve` on loopback,
a local judge that scores every answer 3, and one client's 40 thumbs up."""

from __future__ import annotations

import time
from collections.abc import Mapping
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
ANSWERS = 40


def config(base_url: str) -> str:
    """alpha behind the gateway, a judge that scores 3, the skill fitted every second."""
    return f"""
api:
  tokens:
    - {{role: client, token: {TOKEN}, name: team-a}}
skill:
  fit_interval_s: 1
gateway:
  judge:
    backend: {{kind: openai, base_url: "{base_url}", model: "judge:3"}}
    name: local-judge
agents:
  - name: alpha
    model_name: alpha-model
    backend: {{kind: openai, base_url: "{base_url}", model: "good:alpha",
               api_key_env: GW_KEY_ALPHA}}
"""


def get(server: Server, path: str) -> Any:
    """A GET's JSON."""
    return httpx.get(server.url(path), timeout=10).json()


def support_skill(server: Server) -> dict[str, Any]:
    """alpha's skill at ``support``."""
    found = get(server, "/agents/alpha/skills")
    return next(s for s in found["task_types"] if s["task_type"] == "support")


def wait_for(what: str, test: Any, server: Server, seconds: float = 60) -> None:
    """Poll ``test`` until it holds."""
    deadline = time.monotonic() + seconds
    while not test():
        assert time.monotonic() < deadline, f"{what}: {server.output()[-3000:]}"
        time.sleep(0.2)


def test_forty_thumbs_up_served_buy_no_standing(
    tmp_path: Path, providers: Providers, monkeypatch: pytest.MonkeyPatch
) -> None:
    """40 answers checked and failed (the judge's 3), then a thumbs up on each by the
    client: XP, level, judged tasks and the validation rate stay as the checks left them,
    the next answer is still checked, the fitted skill stays inside the interval it had,
    the public scale names no client, and each feedback's comment is in the server's log."""
    monkeypatch.setenv("GW_KEY_ALPHA", "sk-alpha-secret")
    server = start_server(tmp_path, config(providers.base_url))
    try:
        with openai.OpenAI(
            base_url=server.url("/v1"), api_key=TOKEN, max_retries=0, timeout=30
        ) as client:

            def ask() -> Mapping[str, str]:
                raw = client.chat.completions.with_raw_response.create(
                    model="alpha", messages=ASK,
                    extra_headers={"x-agentladder-task-type": "support"},
                )  # fmt: skip
                return raw.headers

            contracts = []
            for _ in range(ANSWERS):
                headers = ask()
                assert headers["x-agentladder-check"] == "yes"  # failed checks: probation
                contracts.append(headers["x-agentladder-contract"])
            profile = "/oracle/profiles/alpha"
            wait_for(
                "the checks judged",
                lambda: get(server, profile)["specializations"]["support"]["tasks_judged"]
                == ANSWERS, server,
            )  # fmt: skip
            wait_for("a fit of the checks", lambda: support_skill(server)["observations"]
                     >= ANSWERS, server)  # fmt: skip
            before = support_skill(server)
            standing = get(server, profile)
            rate = get(server, "/oracle/agents/alpha/validation-rate?task_type=support")
            for contract in contracts:
                given = httpx.post(
                    server.url("/v1/feedback"), headers={"Authorization": f"Bearer {TOKEN}"},
                    json={"contract_id": contract, "thumbs": "up", "comment": "great work"},
                    timeout=10,
                )  # fmt: skip
                assert given.status_code == 200, given.text
                assert given.json()["xp_awarded"] == 0
            after = get(server, profile)
            assert (after["xp"], after["level"]) == (standing["xp"], standing["level"])
            assert after["specializations"]["support"] == standing["specializations"]["support"]
            assert get(server, "/oracle/agents/alpha/validation-rate?task_type=support") == rate
            assert ask()["x-agentladder-check"] == "yes"
            wait_for("a fit of the feedback", lambda: support_skill(server)["observations"]
                     > before["observations"], server)  # fmt: skip
            moved = support_skill(server)
            assert before["low"] <= moved["skill"] <= before["high"], (before, moved)
            scale = get(server, "/skills?task_type=support")["scale"][0]["sources"]
            names = [source["source"] for source in scale]
            assert "judge:feedback" in names  # one source for every client, unnamed
            assert not any("team-a" in name for name in names)
        log = server.output()
        assert "feedback on" in log
        assert "by team-a: 10: great work" in log
    finally:
        server.stop()
