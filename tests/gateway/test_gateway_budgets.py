"""Budgets, as OpenAI's own client sees them: a client token's spend per period, kept in
the store (a restart and a second instance see it), 429 ``insufficient_quota`` once a
request's hold does not fit what is left, the ``x-agentladder-budget-*`` headers on every
answer."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from tests.gateway.provider import Providers
from tests.served import Server, start_server

TEAM_A = "team-a-token-0123456789"
TEAM_B = "team-b-token-0123456789"
ASK: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Which controls matter most?"}]
COST = "0.000025"
"""One answer: 11 prompt tokens at $1/Mtok and 7 completion tokens at $2/Mtok. With
``max_tokens: 7`` a request holds $0.00002 before it is forwarded (its prompt estimated at
6 tokens, 4 characters a token)."""


def config(base_url: str) -> str:
    """alpha on the local provider; team-a may spend $0.00006 a day (two answers leave
    $0.00001, where the third's hold does not fit); team-b has no budget."""
    return f"""
api:
  tokens:
    - {{role: client, token: {TEAM_A}, name: team-a, budget: {{limit_usd: 0.00006, period: day}}}}
    - {{role: client, token: {TEAM_B}, name: team-b}}
agents:
  - name: alpha
    input_price_per_mtok: 1.0
    output_price_per_mtok: 2.0
    backend: {{kind: openai, base_url: "{base_url}", model: "good:alpha",
               api_key_env: GW_KEY_ALPHA}}
"""


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    """alpha's API key, set for the served processes."""
    monkeypatch.setenv("GW_KEY_ALPHA", "sk-alpha-secret")


@pytest.fixture
def served(tmp_path: Path, providers: Providers) -> Iterator[Server]:
    """`agentladder serve` on SQLite with the budgets above, stopped by pid."""
    server = start_server(tmp_path, config(providers.base_url))
    try:
        yield server
    finally:
        if server.process.poll() is None:
            server.stop()


def client(server: Server, token: str) -> openai.OpenAI:
    """OpenAI's client on the gateway, without retries of its own."""
    return openai.OpenAI(base_url=server.url("/v1"), api_key=token, max_retries=0, timeout=30)


def spend(server: Server, token: str) -> httpx.Response:
    """One non-streamed request, its raw answer."""
    return httpx.post(
        server.url("/v1/chat/completions"), headers={"Authorization": f"Bearer {token}"},
        json={"model": "alpha", "messages": ASK, "max_tokens": 7}, timeout=30,
    )  # fmt: skip


def midnight() -> str:
    """The next UTC midnight, as the reset header says it."""
    end = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
    return end.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_a_budget_is_charged_per_answer_and_refused_when_spent(
    served: Server, providers: Providers
) -> None:
    """Each answer (non-streamed and streamed) carries the budget's headers with the spend
    before it and its hold; once a request's hold does not fit what is left the official
    client gets 429 ``insufficient_quota`` (RateLimitError) with Retry-After until
    midnight UTC and nothing is forwarded; a client without a budget is not limited;
    errors carry the budget's headers too."""
    bodies = (b'{"model": "alpha"}', b'{"model": "nobody", "messages": [1]}', b"{")
    for body, status in zip(bodies, (400, 404, 400), strict=True):  # the last: not JSON
        error = httpx.post(
            served.url("/v1/chat/completions"), content=body, timeout=30,
            headers={"Authorization": f"Bearer {TEAM_A}", "content-type": "application/json"},
        )  # fmt: skip
        assert error.status_code == status, error.text
        assert error.headers["x-agentladder-budget-spent"] == "0.000000"
        assert error.headers["x-agentladder-budget-limit"] == "0.000060"
    with client(served, TEAM_A) as team_a:
        first = team_a.chat.completions.with_raw_response.create(
            model="alpha", messages=ASK, max_tokens=7
        )
        assert first.parse().choices[0].message.content == "answer from alpha"
        assert first.headers["x-agentladder-budget-limit"] == "0.000060"
        assert first.headers["x-agentladder-budget-spent"] == "0.000000"
        assert first.headers["x-agentladder-budget-remaining"] == "0.000060"
        assert first.headers["x-agentladder-budget-reserved"] == "0.000020"
        assert first.headers["x-agentladder-budget-period"] == "day"
        assert first.headers["x-agentladder-budget-reset"] == midnight()
        second = team_a.chat.completions.with_raw_response.create(
            model="alpha", messages=ASK, stream=True, stream_options={"include_usage": True},
            max_tokens=7,
        )  # fmt: skip
        assert second.headers["x-agentladder-budget-spent"] == COST
        pieces = [c.choices[0].delta.content or "" for c in second.parse() if c.choices]
        assert "".join(pieces) == "answer from alpha"
        asked = len(providers.seen())
        with pytest.raises(openai.RateLimitError) as refused:
            team_a.chat.completions.create(model="alpha", messages=ASK, max_tokens=7)
    quota = refused.value
    assert quota.code == "insufficient_quota"
    assert quota.type == "insufficient_quota"
    assert (
        "client 'team-a' has $0.000010 left of its $0.000060 budget for the day (spent"
        " $0.000050, $0.000000 held by its requests in flight): this request would hold"
        " $0.000020 (6 prompt and 7 output tokens at alpha's prices), which does not fit"
    ) in quota.message
    assert f"it resets at {midnight()}" in quota.message
    headers = quota.response.headers
    assert 1 <= int(headers["retry-after"]) <= 86_400
    assert headers["x-agentladder-budget-remaining"] == "0.000010"
    assert headers["x-agentladder-budget-spent"] == "0.000050"
    assert len(providers.seen()) == asked  # refused before anything was forwarded
    free = spend(served, TEAM_B)
    assert free.status_code == 200
    assert not any(name.startswith("x-agentladder-budget-") for name in free.headers)


def test_the_spend_survives_a_restart(tmp_path: Path, providers: Providers) -> None:
    """Spent to where no hold fits, stopped, started again on the same SQLite file: still
    429, at once, with the spend read back."""
    server = start_server(tmp_path, config(providers.base_url))
    try:
        for _ in range(2):
            assert spend(server, TEAM_A).status_code == 200
    finally:
        server.stop()
    again = start_server(tmp_path, config(providers.base_url))
    try:
        refused = spend(again, TEAM_A)
        assert refused.status_code == 429, refused.text
        assert refused.headers["x-agentladder-budget-spent"] == "0.000050"
    finally:
        again.stop()


def spent_metric(server: Server) -> float:
    """team-a's spend today on ``/metrics``."""
    line = 'agentladder_gateway_client_spend_dollars{client="team-a",period="day"} '
    for found in httpx.get(server.url("/metrics"), timeout=10).text.splitlines():
        if found.startswith(line):
            return float(found.split()[-1])
    raise AssertionError("no spend of team-a on /metrics")


def wait_for_spend(server: Server, dollars: float) -> None:
    """Until ``server`` shows team-a's spend today at ``dollars`` (it reads the store's
    each second), at most 15 s."""
    deadline = time.monotonic() + 15
    while abs(spent_metric(server) - dollars) > 1e-12 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert spent_metric(server) == pytest.approx(dollars, abs=1e-12)


def test_two_instances_share_one_spend(tmp_path: Path, providers: Providers) -> None:
    """Two instances on one SQLite file: a request on the second holds against what the
    first charged at once (the hold reads the store), so it is refused there; each
    instance's /metrics shows the spend within its one-second read."""
    first = start_server(tmp_path, config(providers.base_url))
    try:
        second = start_server(tmp_path, config(providers.base_url))
        try:
            for _ in range(2):
                assert spend(first, TEAM_A).status_code == 200
            refused = spend(second, TEAM_A)  # 0.00005 spent + 0.00002 held > 0.00006
            assert refused.status_code == 429, refused.text
            assert refused.json()["error"]["code"] == "insufficient_quota"
            assert refused.headers["x-agentladder-budget-spent"] == "0.000050"
            wait_for_spend(second, 0.00005)
            wait_for_spend(first, 0.00005)
        finally:
            second.stop()
    finally:
        first.stop()
