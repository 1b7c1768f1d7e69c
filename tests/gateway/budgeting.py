"""The budgets' served tests' configuration and calls: agents on the local provider
(``provider.py``) at prices that make one request's cost a round figure, and team-a's
requests and spend."""

from __future__ import annotations

import time
from typing import Any

import httpx
from openai.types.chat import ChatCompletionMessageParam

from tests.served import Server

__all__ = ["ASK", "REQUEST", "TEAM_A", "ask", "config", "settled_spend", "spent"]

TEAM_A = "team-a-token-0123456789"
ASK: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Which controls matter most?"}]
REQUEST = 0.20
"""One request to ``alpha`` with ``max_tokens: 100``: 100 output tokens at $2,000/Mtok
(prompts are free here), held and then charged exactly."""


def config(base_url: str) -> str:
    """alpha answers after 200 ms with usage of max_tokens; bad fails (500), strict
    refuses (400), drip streams 40 pieces slowly, delta answers 429 with Retry-After: 30;
    team-a may spend $1.00 a day."""

    def agent(name: str, model: str, out: float) -> str:
        return f"""
  - name: {name}
    input_price_per_mtok: 0.0
    output_price_per_mtok: {out}
    backend: {{kind: openai, base_url: "{base_url}", model: "{model}",
               api_key_env: GW_KEY_BUDGET}}"""

    return f"""
api:
  tokens:
    - {{role: client, token: {TEAM_A}, name: team-a, max_in_flight: 100,
       budget: {{limit_usd: 1.0, period: day}}}}
agents:{agent("alpha", "budgetusage:200", 2000.0)}{agent("bad", "fail:bad", 2000.0)}\
{agent("strict", "reject:strict", 2000.0)}{agent("drip", "budgetdrip:40", 1000.0)}\
{agent("delta", "ratelimit:30", 2000.0)}
"""


def ask(server: Server, model: str, max_tokens: int, **extra: Any) -> httpx.Response:
    """One request of team-a."""
    return httpx.post(
        server.url("/v1/chat/completions"), headers={"Authorization": f"Bearer {TEAM_A}"},
        json={"model": model, "messages": ASK, "max_tokens": max_tokens, **extra}, timeout=30,
    )  # fmt: skip


def spent(server: Server) -> float:
    """team-a's spend today on ``/metrics`` (the store's, read each second)."""
    line = 'agentladder_gateway_client_spend_dollars{client="team-a",period="day"} '
    for found in httpx.get(server.url("/metrics"), timeout=10).text.splitlines():
        if found.startswith(line):
            return float(found.split()[-1])
    raise AssertionError("no spend of team-a on /metrics")


def settled_spend(server: Server, expected: float | None = None) -> float:
    """team-a's spend once the instance read it back (it reads the store each second):
    ``expected`` once it shows it (at most 60 reads), else the first figure above 0 that
    two reads 1.2 s apart agree on (at most 30 pairs). What it shows last when neither
    comes, for the caller's assertion to report."""
    last = spent(server)
    if expected is not None:
        for _ in range(60):
            if abs(last - expected) < 1e-9:
                break
            time.sleep(0.2)
            last = spent(server)
        return last
    for _ in range(30):
        time.sleep(1.2)
        now = spent(server)
        if now == last and now > 0:
            break
        last = now
    return last
