"""Budgets over time, with the clock injected: a day's budget opens again at midnight
UTC, a month's on the 1st, a total one never; the store holds each period apart."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from agentladder.services.clock import FixedClock
from agentladder.services.container import Services
from tests.gateway.provider import Providers
from tests.inprocess import call_app

TOKENS = {"day": "day-token-0123456789", "month": "month-token-0123456789",
          "total": "total-token-0123456789"}  # fmt: skip
ASK = [{"role": "user", "content": "Which controls matter most?"}]


def settings(base_url: str) -> dict[str, Any]:
    """alpha ($0.000025 an answer) and three clients whose budget one answer spends."""
    tokens = [
        {"role": "client", "token": token, "name": f"team-{period}",
         "budget": {"limit_usd": 0.00002, "period": period}}
        for period, token in TOKENS.items()
    ]  # fmt: skip
    agent = {
        "name": "alpha", "input_price_per_mtok": 1.0, "output_price_per_mtok": 2.0,
        "backend": {"kind": "openai", "base_url": base_url, "model": "good:alpha",
                    "api_key_env": "GW_KEY_ALPHA"},
    }  # fmt: skip
    return {"api": {"tokens": tokens}, "agents": [agent]}


async def ask(client: httpx.AsyncClient, period: str) -> httpx.Response:
    """One request of the client whose budget is for ``period``; it holds $0.00002 (6
    prompt and 7 output tokens at alpha's prices), its answer costs $0.000025."""
    return await client.post(
        "/v1/chat/completions", json={"model": "alpha", "messages": ASK, "max_tokens": 7},
        headers={"Authorization": f"Bearer {TOKENS[period]}"},
    )  # fmt: skip


def test_a_period_resets_at_its_end(providers: Providers, monkeypatch: pytest.MonkeyPatch) -> None:
    """At 23:59 on 31 December each client spends its budget with one answer and is
    refused; Retry-After counts to midnight for the day and the month (both end then),
    none for total; a minute later the day's and month's clients are answered, spent 0,
    and the total's is still refused; the store holds each period's spend apart."""
    monkeypatch.setenv("GW_KEY_ALPHA", "sk-alpha-secret")
    clock = FixedClock(datetime(2026, 12, 31, 23, 59, 0, tzinfo=UTC))

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        for period in TOKENS:
            assert (await ask(client, period)).status_code == 200
        for period in TOKENS:
            refused = await ask(client, period)
            assert refused.status_code == 429
            error = refused.json()["error"]
            assert error["code"] == "insufficient_quota"
            if period == "total":
                assert "retry-after" not in refused.headers
                assert refused.headers["x-agentladder-budget-reset"] == "never"
                assert "a total budget does not reset" in error["message"]
            else:
                assert refused.headers["retry-after"] == "60"
                assert refused.headers["x-agentladder-budget-reset"] == "2027-01-01T00:00:00Z"
                assert "it resets at 2027-01-01T00:00:00Z (in 60 s)" in error["message"]
        await services.gateway.budgets.flush()
        clock.advance(60)
        for period in ("day", "month"):
            again = await ask(client, period)
            assert again.status_code == 200, again.text
            assert again.headers["x-agentladder-budget-spent"] == "0.000000"
            assert again.headers["x-agentladder-budget-reset"] == (
                "2027-01-02T00:00:00Z" if period == "day" else "2027-02-01T00:00:00Z"
            )
        assert (await ask(client, "total")).status_code == 429
        await services.gateway.budgets.flush()
        stored = await services.store.get_spend(
            [("team-day", "day-2026-12-31"), ("team-day", "day-2027-01-01"),
             ("team-month", "month-2026-12"), ("team-total", "total")]
        )  # fmt: skip
        assert stored == {
            ("team-day", "day-2026-12-31"): 25_000,
            ("team-day", "day-2027-01-01"): 25_000,
            ("team-month", "month-2026-12"): 25_000,
            ("team-total", "total"): 25_000,
        }

    call_app(settings(providers.base_url), body, clock=clock)
