"""Refusals OpenAI's clients understand, served: a spent budget, or a request whose
hold does not fit what is left, is OpenAI's own quota error (429 ``insufficient_quota``,
which OpenAI's client raises without retrying); the 503 when every agent failed says
when to try again (``Retry-After``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import httpx2
import openai
import pytest

from tests.gateway.budgeting import ASK, TEAM_A, ask, config
from tests.gateway.provider import Providers
from tests.served import Server, start_server


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The agents' API key, set for the served processes."""
    monkeypatch.setenv("GW_KEY_BUDGET", "sk-budget-secret")


def _served(folder: Path, providers: Providers) -> Iterator[Server]:
    """One instance on SQLite, stopped by pid."""
    server = start_server(folder, config(providers.base_url))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def served(tmp_path: Path, providers: Providers) -> Iterator[Server]:
    """An instance for this test alone: for one that spends team-a's budget or reads
    what it has left."""
    yield from _served(tmp_path, providers)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory, providers: Providers) -> Iterator[Server]:
    """One instance for the tests that spend nothing and read no budget: a start costs
    seconds."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("GW_KEY_BUDGET", "sk-budget-secret")
        yield from _served(tmp_path_factory.mktemp("refusals"), providers)


def counted(requests: list[httpx2.Request]) -> httpx2.Client:
    """An HTTP client (of the kind OpenAI's client is built on) that appends every
    request it sends to ``requests``."""
    return httpx2.Client(event_hooks={"request": [requests.append]}, timeout=30)


def test_a_spent_budget_is_openais_insufficient_quota(served: Server, providers: Providers) -> None:
    """Five $0.20 answers spend team-a's $1.00; the sixth request is 429 with exactly
    OpenAI's quota body (type and code ``insufficient_quota``, param null), the budget's
    headers, Retry-After until midnight and ``x-should-retry: false``; nothing is
    forwarded."""
    for _ in range(5):
        assert ask(served, "alpha", 100).status_code == 200
    before = len(providers.seen())
    refused = ask(served, "alpha", 100)
    assert refused.status_code == 429
    body = refused.json()
    assert list(body) == ["error"]
    assert list(body["error"]) == ["message", "type", "param", "code"]
    message = body["error"]["message"]
    assert body == {"error": {"message": message, "type": "insufficient_quota",
                              "param": None, "code": "insufficient_quota"}}  # fmt: skip
    assert message.startswith(
        "client 'team-a' spent $1.000000 of its $1.000000 budget for the day: $0 left;"
        " it resets at "
    )
    headers = refused.headers
    assert headers["x-should-retry"] == "false"
    assert 1 <= int(headers["retry-after"]) <= 86_400
    assert headers["x-agentladder-budget-spent"] == "1.000000"
    assert headers["x-agentladder-budget-remaining"] == "0.000000"
    assert headers["x-agentladder-budget-limit"] == "1.000000"
    assert len(providers.seen()) == before


def test_a_hold_that_does_not_fit_is_refused_with_its_figures(
    served: Server, providers: Providers
) -> None:
    """With $1.00 left, a request of 600 output tokens would hold $1.20: 429
    ``insufficient_quota`` saying what is left and what it would hold; a max_tokens that
    is not a number is 400 naming it; with 500 it fits."""
    before = len(providers.seen())
    refused = ask(served, "alpha", 600)
    assert refused.status_code == 429
    error = refused.json()["error"]
    assert (error["type"], error["code"], error["param"]) == (
        "insufficient_quota", "insufficient_quota", None,
    )  # fmt: skip
    assert error["message"].startswith(
        "client 'team-a' has $1.000000 left of its $1.000000 budget for the day (spent"
        " $0.000000, $0.000000 held by its requests in flight): this request would hold"
        " $1.200000 (6 prompt and 600 output tokens at alpha's prices), which does not fit"
    )
    assert refused.headers["x-agentladder-budget-reserved"] == "1.200000"
    bad = httpx.post(
        served.url("/v1/chat/completions"), headers={"Authorization": f"Bearer {TEAM_A}"},
        json={"model": "alpha", "messages": ASK, "max_tokens": "100"}, timeout=30,
    )  # fmt: skip
    assert bad.status_code == 400
    assert bad.json()["error"]["param"] == "max_tokens"
    assert bad.json()["error"]["message"] == (
        "max_tokens: must be a whole number of tokens ('100')"
    )
    assert len(providers.seen()) == before
    assert ask(served, "alpha", 500).status_code == 200


def test_openais_client_raises_the_quota_error_without_retrying(
    shared: Server, providers: Providers
) -> None:
    """OpenAI's own client, with its default two retries, sends a refused request once
    and raises RateLimitError whose code is ``insufficient_quota``; the agent is not
    asked."""
    requests: list[httpx2.Request] = []
    with counted(requests) as http:
        client = openai.OpenAI(base_url=shared.url("/v1"), api_key=TEAM_A, http_client=http)
        assert client.max_retries == 2
        before = len(providers.seen())
        with pytest.raises(openai.RateLimitError) as raised:
            client.chat.completions.create(model="alpha", messages=ASK, max_tokens=600)
    assert raised.value.code == "insufficient_quota"
    assert raised.value.type == "insufficient_quota"
    assert len(requests) == 1
    assert len(providers.seen()) == before


def test_the_503_says_when_an_agent_may_be_asked_again(shared: Server) -> None:
    """delta answers 429 with Retry-After: 30, so the 503 ``agents_failed`` says 30 s;
    asked again, delta is not asked and the 503 says what is left of the 30 s; bad
    (one 500, not down) may be asked at once: 1 s, the least."""
    first = ask(shared, "delta", 10)
    assert first.status_code == 503
    assert first.json()["error"]["code"] == "agents_failed"
    assert 29 <= int(first.headers["retry-after"]) <= 30
    again = ask(shared, "delta", 10)
    assert again.status_code == 503
    assert "not asked" in again.json()["error"]["message"]
    assert 1 <= int(again.headers["retry-after"]) <= int(first.headers["retry-after"])
    failed = ask(shared, "bad", 10)
    assert failed.status_code == 503
    assert failed.headers["retry-after"] == "1"
