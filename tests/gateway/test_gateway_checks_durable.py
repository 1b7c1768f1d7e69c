"""Checks that survive: `agentladder serve` on loopback (SQLite) in front of the local
providers (``provider.py``), its judge there, OpenAI's own client: a server killed with
checks pending and started again, a judge down then up, a verdict that fails then is
stored."""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from tests.gateway.provider import Providers
from tests.served import Server, free_port, start_server

TOKEN = "team-a-token-0123456789"
ASK: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Which controls matter?"}]
SUPPORT = {"x-agentladder-task-type": "support"}


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """alpha's API key variable, for the served process."""
    monkeypatch.setenv("GW_KEY_ALPHA", "sk-alpha-secret")


def config(base_url: str, judge_url: str, judge_model: str) -> str:
    """alpha behind the gateway, judged by ``judge_model`` at ``judge_url``; short leases
    and retries, so that a restart takes its checks over within a second or two."""
    return f"""
api:
  tokens:
    - {{role: client, token: {TOKEN}, name: team-a}}
orchestrator: {{lease_s: 1, recover_interval_s: 0.3}}
gateway:
  judge:
    backend: {{kind: openai, base_url: "{judge_url}", model: "{judge_model}", timeout_s: 30}}
    name: local-judge
    retry_s: 0.2
    attempts: 100
agents:
  - name: alpha
    model_name: alpha-model
    backend: {{kind: openai, base_url: "{base_url}", model: "good:alpha",
               api_key_env: GW_KEY_ALPHA}}
"""


def ask(server: Server, count: int, stream: bool = False) -> list[str]:
    """``count`` requests to alpha at ``support`` (a rookie there: each checked); the
    contracts whose ``x-agentladder-check`` said yes."""
    contracts = []
    with openai.OpenAI(
        base_url=server.url("/v1"), api_key=TOKEN, max_retries=0, timeout=30
    ) as client:
        for _ in range(count):
            if stream:
                streamed = client.chat.completions.with_raw_response.create(
                    model="alpha", messages=ASK, stream=True, extra_headers=SUPPORT
                )
                pieces = [c.choices[0].delta.content or "" for c in streamed.parse() if c.choices]
                assert "".join(pieces) == "answer from alpha"
                headers = streamed.headers
            else:
                raw = client.chat.completions.with_raw_response.create(
                    model="alpha", messages=ASK, extra_headers=SUPPORT
                )
                assert raw.parse().choices[0].message.content == "answer from alpha"
                headers = raw.headers
            assert headers["x-agentladder-check"] == "yes"
            contracts.append(headers["x-agentladder-contract"])
    return contracts


def checks(server: Server, outcome: str) -> int:
    """``agentladder_gateway_checks_total`` of alpha at support for ``outcome``."""
    metrics = httpx.get(server.url("/metrics"), timeout=10).text
    line = (
        r'agentladder_gateway_checks_total\{agent="alpha",outcome="' + outcome
        + r'",task_type="support"\} ([0-9.]+)'
    )  # fmt: skip
    found = re.search(line, metrics)
    return int(float(found.group(1))) if found else 0


def judged(server: Server) -> int:
    """alpha's judged tasks at support (0 before any)."""
    profile = httpx.get(server.url("/oracle/profiles/alpha"), timeout=10).json()
    return int(profile.get("specializations", {}).get("support", {}).get("tasks_judged", 0))


def wait(what: Callable[[], bool], server: Server, seconds: float = 60) -> None:
    """Until ``what()`` holds (the server's log in the failure after ``seconds``)."""
    deadline = time.monotonic() + seconds
    while not what():
        assert time.monotonic() < deadline, server.output()[-3000:]
        time.sleep(0.1)


def events(db: Path, contracts: list[str]) -> dict[str, tuple[int, int]]:
    """Per contract, alpha's judgment and verdict events stored in the SQLite file."""
    with sqlite3.connect(db) as conn:
        return {
            contract: tuple(
                conn.execute(
                    "SELECT count(*) FROM oracle_events WHERE agent_id = 'alpha' AND key = ?",
                    (f"{kind}:{contract}",),
                ).fetchone()[0]
                for kind in ("judgment", "validation")
            )
            for contract in contracts
        }


def pending(db: Path) -> int:
    """The checks left in the store."""
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM gateway_checks").fetchone()[0])


def ledger_contracts(server: Server) -> set[str]:
    """The contracts of alpha's xp_history lines (each judgment's award)."""
    history = httpx.get(
        server.url("/oracle/profiles/alpha/history"), params={"limit": 1000}, timeout=10
    ).json()
    return {entry["contract_id"] for entry in history["entries"]}


@pytest.mark.parametrize("backend", ["sqlite", "nats"])
def test_a_server_killed_with_checks_pending_judges_each_once_after_a_restart(
    tmp_path: Path, providers: Providers, backend: str, request: pytest.FixtureRequest
) -> None:
    """12 answers (8 plain, 4 streamed) said ``x-agentladder-check: yes`` while a slow
    judge (1.5 s a check, 4 at a time) had judged few of them; the server is killed
    (SIGKILL) and started again on its store (SQLite, NATS): every one of the 12 contracts
    is judged (alpha has 12 judged tasks, each contract in its ledger), the checks left are
    taken over (``recovered``), none given up; on SQLite, each contract holds exactly one
    judgment and one verdict of alpha, and no check is left stored."""
    store = str(request.getfixturevalue("nats_store_url")) if backend == "nats" else None
    text = config(providers.base_url, providers.base_url, "judge:8:1500")
    server = start_server(tmp_path, text, store=store)
    try:
        contracts = ask(server, 8) + ask(server, 4, stream=True)
        assert len(set(contracts)) == 12
        done_before = judged(server)
    finally:
        server.kill()
    assert done_before < 12
    db = tmp_path / "served.db"
    if store is None:
        assert pending(db) >= 12 - done_before
    again = start_server(tmp_path, text, store=store)
    try:
        wait(lambda: judged(again) == 12, again)
        wait(lambda: checks(again, "passed") == checks(again, "recovered"), again)
        assert checks(again, "recovered") >= 12 - done_before
        assert checks(again, "error") == 0
        assert set(contracts) <= ledger_contracts(again)
        assert judged(again) == 12
    finally:
        again.stop()
    if store is None:
        assert events(db, contracts) == dict.fromkeys(contracts, (1, 1))
        assert pending(db) == 0


def test_a_check_whose_judge_is_down_runs_once_it_is_back(
    tmp_path: Path, providers: Providers
) -> None:
    """The judge's address refuses connections: the 3 checks are retried (``retried``),
    none given up; once a judge listens there, each is judged: 3 judged tasks, a
    judgment and a verdict per contract."""
    port = free_port()
    text = config(providers.base_url, f"http://127.0.0.1:{port}/v1", "judge:9")
    server = start_server(tmp_path, text)
    judge = None
    try:
        contracts = ask(server, 3)
        wait(lambda: checks(server, "retried") >= 3, server)
        assert judged(server) == 0
        judge = Providers(tmp_path, port)
        wait(lambda: judged(server) == 3, server)
        wait(lambda: checks(server, "passed") == 3, server)
        assert checks(server, "error") == 0
    finally:
        server.stop()
        if judge is not None:
            judge.stop()
    db = tmp_path / "served.db"
    assert events(db, contracts) == dict.fromkeys(contracts, (1, 1))
    assert pending(db) == 0


def test_a_verdict_that_fails_is_retried_without_asking_the_judge_again(
    tmp_path: Path, providers: Providers
) -> None:
    """The verdict's write fails (a trigger in the SQLite file refuses validation events)
    after the check's judgment is stored: the check is retried, not given up; once the
    trigger is gone the verdict is stored, and the judge was asked once."""
    model = "judge:7.5"  # this module's only judge of that score: its calls are this test's
    server = start_server(tmp_path, config(providers.base_url, providers.base_url, model))
    db = tmp_path / "served.db"
    try:
        with sqlite3.connect(db) as conn:
            conn.execute(
                "CREATE TRIGGER held BEFORE INSERT ON oracle_events"
                " WHEN NEW.key LIKE 'validation:%' BEGIN SELECT RAISE(ABORT, 'held'); END"
            )
        (contract,) = ask(server, 1)
        wait(lambda: checks(server, "retried") >= 2, server)
        assert events(db, [contract]) == {contract: (1, 0)}
        assert checks(server, "error") == 0
        with sqlite3.connect(db) as conn:
            conn.execute("DROP TRIGGER held")
        wait(lambda: checks(server, "passed") == 1, server)
    finally:
        server.stop()
    assert events(db, [contract]) == {contract: (1, 1)}
    assert pending(db) == 0
    assert [s["model"] for s in providers.seen()].count(model) == 1
