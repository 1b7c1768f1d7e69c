"""Budgets that hold under concurrency, served: each request of a budgeted client holds
money in the store before it is forwarded, so 50 requests at once (on SQLite, on NATS,
through one instance or two sharing the store) spend at most the budget plus one
request's worth; a failed or refused request releases its hold; a stream its caller
left settles what was relayed."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.gateway.budgeting import ASK, REQUEST, TEAM_A, ask, config, settled_spend
from tests.gateway.provider import Providers
from tests.served import Server, start_server


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The agents' API key, set for the served processes."""
    monkeypatch.setenv("GW_KEY_BUDGET", "sk-budget-secret")


@pytest.fixture
def served(tmp_path: Path, providers: Providers) -> Iterator[Server]:
    """One instance on SQLite, stopped by pid."""
    server = start_server(tmp_path, config(providers.base_url))
    try:
        yield server
    finally:
        server.stop()


async def burst(servers: list[Server], count: int) -> list[httpx.Response]:
    """``count`` requests of team-a at once, spread over ``servers``."""
    limits = httpx.Limits(max_connections=count)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        asked = [
            client.post(
                servers[n % len(servers)].url("/v1/chat/completions"),
                headers={"Authorization": f"Bearer {TEAM_A}"},
                json={"model": "alpha", "messages": ASK, "max_tokens": 100},
            )
            for n in range(count)
        ]
        return list(await asyncio.gather(*asked))


@pytest.mark.parametrize("instances", [1, 2])
@pytest.mark.parametrize("backend", ["sqlite", "nats"])
def test_fifty_requests_at_once_spend_at_most_the_budget_and_one_request(
    tmp_path: Path, providers: Providers, request: pytest.FixtureRequest, backend: str,
    instances: int,
) -> None:  # fmt: skip
    """50 concurrent requests of a client whose $1.00 budget is worth 5 of them, on one
    instance or spread over two sharing the store: at most the budget plus one request's
    worth is spent (here exactly 5 are answered and charged), the others are 429
    insufficient_quota before anything is forwarded."""
    store = str(request.getfixturevalue("nats_store_url")) if backend == "nats" else None
    before = len(providers.seen())
    servers: list[Server] = []
    try:
        for _ in range(instances):
            servers.append(start_server(tmp_path, config(providers.base_url), store=store))
        answers = asyncio.run(burst(servers, 50))
        statuses = sorted(a.status_code for a in answers)
        answered = statuses.count(200)
        assert statuses.count(429) == 50 - answered, statuses
        assert answered == 5
        codes = {a.json()["error"]["code"] for a in answers if a.status_code == 429}
        assert codes == {"insufficient_quota"}
        assert len(providers.seen()) - before == answered  # the refused were not forwarded
        total = settled_spend(servers[-1], answered * REQUEST)
        assert total <= 1.0 + REQUEST + 1e-9
        assert total == pytest.approx(answered * REQUEST)
    finally:
        for server in servers:
            server.stop()


def holds_in(folder: Path) -> int:
    """The holds left in the SQLite file of ``served``."""
    with sqlite3.connect(folder / "served.db") as conn:
        (count,) = conn.execute("SELECT COUNT(*) FROM client_holds").fetchone()
    return int(count)


def test_a_failed_and_a_refused_request_release_their_holds(served: Server, tmp_path: Path) -> None:
    """A request every agent failed (503) and one the agent refused (400) each held
    $0.80 and released it: a request holding $0.90 is answered after them (it would not
    fit beside either hold), and no hold is left in the store."""
    failed = ask(served, "bad", 400)
    assert failed.status_code == 503, failed.text
    assert failed.headers["retry-after"] == "1"  # bad may be asked again at once
    refused = ask(served, "strict", 400)
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["code"] == "context_length_exceeded"
    answered = ask(served, "alpha", 450)
    assert answered.status_code == 200, answered.text
    assert answered.headers["x-agentladder-budget-held"] == "0.000000"
    assert answered.headers["x-agentladder-budget-reserved"] == "0.900000"
    assert answered.headers["x-agentladder-budget-spent"] == "0.000000"
    assert holds_in(tmp_path) == 0
    assert settled_spend(served, 0.9) == pytest.approx(0.9)


def test_a_stream_its_caller_left_settles_what_was_relayed(served: Server, tmp_path: Path) -> None:
    """A stream of drip (40 pieces of 5 characters, $0.001 a token) that the caller
    leaves after three pieces holds $1.00 and is charged what was relayed (some pieces,
    4 characters a token: more than 0, less than the whole $0.05); its hold is gone."""
    body = {"model": "drip", "messages": ASK, "max_tokens": 1000, "stream": True}
    headers = {"Authorization": f"Bearer {TEAM_A}"}
    with (
        httpx.Client(timeout=30) as client,
        client.stream(
            "POST", served.url("/v1/chat/completions"), json=body, headers=headers
        ) as response,
    ):
        assert response.status_code == 200
        assert response.headers["x-agentladder-budget-reserved"] == "1.000000"
        lines = response.iter_lines()
        pieces = 0
        for line in lines:
            pieces += '"word "' in line
            if pieces == 3:
                break
    total = settled_spend(served)
    assert 0.0 < total < 0.05
    for _ in range(40):  # the hold is dropped with the settle
        if holds_in(tmp_path) == 0:
            break
        time.sleep(0.1)
    assert holds_in(tmp_path) == 0
    again = ask(served, "alpha", 450)  # $0.90 fits: the $1.00 hold is gone
    assert again.status_code == 200, again.text


def test_a_crash_keeps_acknowledged_spend_and_its_holds_expire(
    tmp_path: Path, providers: Providers
) -> None:
    """Killed (SIGKILL) right after an answer and while a request held $0.50 waiting for
    a slow agent: after a restart on the same file the answer's $0.20 is spent, the dead
    request's hold still counts (a $0.40 hold does not fit), and once
    ``gateway.reservation_s`` (20 s) passed it counts no more (the $0.40 fits). The 20 s
    hold outlasts a kill and a restart on a loaded machine (10 s did not, once, serially
    beside other work: the hold had expired before the first request after the restart)."""
    slow = (
        config(providers.base_url).replace("agents:", "gateway: {reservation_s: 20}\nagents:", 1)
        + f"""
  - name: slow
    input_price_per_mtok: 0.0
    output_price_per_mtok: 2000.0
    backend: {{kind: openai, base_url: "{providers.base_url}", model: "budgetusage:20000",
               api_key_env: GW_KEY_BUDGET, timeout_s: 60}}
"""
    )
    server = start_server(tmp_path, slow)
    assert ask(server, "alpha", 100).status_code == 200
    outcome: list[str] = []

    def pending() -> None:  # answered after 20 s: its hold is taken at once
        try:
            outcome.append(str(ask(server, "slow", 250).status_code))
        except httpx.HTTPError as error:
            outcome.append(type(error).__name__)

    thread = threading.Thread(target=pending)
    thread.start()
    try:
        for _ in range(100):  # until its hold is in the file
            if holds_in(tmp_path) == 1:
                break
            time.sleep(0.1)
        assert holds_in(tmp_path) == 1
    finally:
        server.kill()
        thread.join(timeout=60)
    assert len(outcome) == 1
    assert outcome[0] != "200"  # it was never answered
    again = start_server(tmp_path, slow)
    try:
        refused = ask(again, "alpha", 200)
        assert refused.status_code == 429, refused.text
        assert refused.headers["x-agentladder-budget-spent"] == "0.200000"
        assert refused.headers["x-agentladder-budget-held"] == "0.500000"
        for _ in range(90):  # the dead request's hold expires 20 s after it was taken
            answered = ask(again, "alpha", 200)
            if answered.status_code == 200:
                break
            time.sleep(0.5)
        assert answered.status_code == 200, answered.text
        assert answered.headers["x-agentladder-budget-held"] == "0.000000"
    finally:
        again.stop()
