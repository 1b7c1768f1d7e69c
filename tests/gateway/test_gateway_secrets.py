"""No secret leaves through an error, served: `agentladder serve` on loopback in front of
an upstream whose 401 echoes the caller's key, its basic password, its query and
key-looking strings (``provider.py``, ``secretecho``), with agents whose ``base_url``
carries ``user:PASSWORD@`` and ``?api_key=...``. After gateway requests, a deliberation
among them and the calls' health, every public or token-gated read (each GET route of the
API), the exports, the gateway's 503 as OpenAI's client sees it and the server's log show
neither a key, nor the password, nor a token, while the useful part of the message (the
status, "Incorrect API key provided") still shows."""

from __future__ import annotations

import asyncio
import importlib
import os
import pkgutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import openai
import pytest

from agentladder.api import routes
from agentladder.domain.deliberation_record import (
    DeliberationRecord,
    DeliberationStatus,
    ProposalRecord,
    RoundRecord,
)
from agentladder.store.records import DeliberationDoc
from agentladder.store.url import open_store
from tests.gateway.provider import SECRET_LOOKING, Providers
from tests.served import Server, free_port, start_server

CLIENT = "secret-client-token-0123456789"
ORCH = "secret-orchestrator-token-0123456789"
ADMIN = "secret-admin-token-from-env-0123456789"
KEY_LEAKY = "unshaped-leaky-key-7731"
"""A key of no known shape: only its configured value redacts it."""
KEY_BASIC = "sk-live-basic0123456789ABCDEF"
PASSWORD = "hunter2-PASSWORD-55"
QUERY_KEY = "querykey-0099"
SECRETS = (CLIENT, ORCH, ADMIN, KEY_LEAKY, KEY_BASIC, PASSWORD, QUERY_KEY, *SECRET_LOOKING)
OLD_ID = "old-record-with-secrets"
"""A record stored before redaction: its raw failure texts hold the secrets."""
USEFUL = "Incorrect API key provided"


def config(base: str, closed: str) -> str:
    """Agents on the echoing upstream: ``leaky`` (a key), ``basic`` (user, password and a
    key in the query of its base_url), ``closed`` (the same URL shape on a closed port)."""
    secret_url = f"http://svc:{PASSWORD}@{base}/v1?api_key={QUERY_KEY}"
    closed_url = f"http://svc:{PASSWORD}@{closed}/v1?api_key={QUERY_KEY}"
    return f"""
api:
  tokens:
    - {{role: client, token: {CLIENT}, name: team-s}}
    - {{role: orchestrator, token: {ORCH}}}
    - {{role: admin, token_env: SECRET_ADMIN_TOKEN}}
routing: {{cooldown_after_failures: 1000, cooldown_min_calls: 10000}}
agents:
  - name: leaky
    backend: {{kind: openai, base_url: "http://{base}/v1", model: "secretecho:leaky",
               api_key_env: SECRET_KEY_LEAKY, timeout_s: 5}}
  - name: basic
    backend: {{kind: openai, base_url: "{secret_url}", model: "secretecho:basic",
               api_key_env: SECRET_KEY_BASIC, timeout_s: 5}}
  - name: closed
    backend: {{kind: openai, base_url: "{closed_url}", model: "x", timeout_s: 5}}
"""


def _old_record() -> DeliberationRecord:
    leaked = (
        f"http: http://svc:{PASSWORD}@h/v1?api_key={QUERY_KEY} answered 401:"
        f" {USEFUL}: {KEY_LEAKY} Bearer {KEY_BASIC}"
    )
    proposal = ProposalRecord(agent_id="leaky", error=leaked)
    return DeliberationRecord(
        id=OLD_ID, status=DeliberationStatus.FAILED, agents=["leaky", "basic"],
        rounds=[RoundRecord(number=1, proposals=[proposal])], created_at=time.time() - 60,
        error=leaked,
    )  # fmt: skip


async def _store_old_record(db: Path) -> None:
    store = await open_store(f"sqlite:///{db}")
    try:
        record = _old_record()
        body = record.model_dump(mode="json")
        doc = DeliberationDoc(
            id=record.id, status="failed", created_at=record.created_at, body=body
        )
        await store.put_deliberation(doc)
    finally:
        await store.close()


@dataclass
class Leaky:
    """The served instance, what its clients saw, and the deliberation it ran."""

    server: Server
    folder: Path
    deliberation: str
    answers: list[str]
    """The bodies of the gateway's failures, as httpx and OpenAI's client saw them."""


def _openai_failure(server: Server, model: str, stream: bool) -> str:
    """The gateway's error for ``model`` as OpenAI's client raises it: its message."""
    with (
        openai.OpenAI(
            base_url=server.url("/v1"), api_key=CLIENT, max_retries=0, timeout=30
        ) as client,
        pytest.raises(openai.APIStatusError) as caught,
    ):
        client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": "hi"}], stream=stream
        )
    assert caught.value.status_code == 503
    return f"{caught.value.message} {caught.value.body!r}"


def _deliberation(server: Server) -> str:
    """A deliberation among the leaking agents, waited for until it ended."""
    started = httpx.post(
        server.url("/deliberation"), headers={"Authorization": f"Bearer {ORCH}"}, timeout=10,
        json={"user_query": "Which controls matter most?", "agent_names": ["leaky", "basic"],
              "scope": "quick"},
    )  # fmt: skip
    assert started.status_code == 202, started.text
    identifier: str = started.json()["deliberation_id"]
    for _ in range(300):
        record = httpx.get(server.url(f"/deliberation/{identifier}"), timeout=10).json()
        if record["status"] in ("completed", "failed"):
            return identifier
        time.sleep(0.05)
    raise AssertionError(f"the deliberation did not end: {record}")


@pytest.fixture(scope="module")
def leaky(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Leaky]:
    """The upstream and `agentladder serve` (an old record in its store), after gateway
    requests and a deliberation; both stopped by pid at the end."""
    folder = tmp_path_factory.mktemp("secrets")
    upstream = Providers(folder, free_port())
    keys = {"SECRET_KEY_LEAKY": KEY_LEAKY, "SECRET_KEY_BASIC": KEY_BASIC,
            "SECRET_ADMIN_TOKEN": ADMIN}  # fmt: skip
    before = {name: os.environ.get(name) for name in keys}
    os.environ.update(keys)
    server = None
    try:
        asyncio.run(_store_old_record(folder / "served.db"))
        base = f"127.0.0.1:{upstream.port}"
        server = start_server(folder, config(base, f"127.0.0.1:{free_port()}"))
        answers = []
        for model in ("leaky", "basic", "closed"):
            answer = httpx.post(
                server.url("/v1/chat/completions"), headers={"Authorization": f"Bearer {CLIENT}"},
                json={"model": model, "messages": [{"role": "user", "content": "hi"}]},
                timeout=30,
            )  # fmt: skip
            assert answer.status_code == 503, answer.text
            answers.append(answer.text)
            answers += [_openai_failure(server, model, stream) for stream in (False, True)]
        yield Leaky(server, folder, _deliberation(server), answers)
    finally:
        if server is not None:
            server.stop()
        upstream.stop()
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _leaks(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


def test_the_gateways_503_names_each_agent_and_why_without_secrets(leaky: Leaky) -> None:
    """The agents_failed error (raw and as OpenAI's client sees it) keeps status and message."""
    for answer in leaky.answers:
        assert _leaks(answer) == [], answer
        assert "agents_failed" in answer or "every agent tried failed" in answer
    assert all(USEFUL in a and "401" in a for a in leaky.answers if "'basic'" in a)
    assert any("127.0.0.1" in a and "closed" in a for a in leaky.answers)


def test_agents_health_shows_the_status_and_message_but_no_secret(leaky: Leaky) -> None:
    """GET /agents/{id}'s health keeps '401' and the provider's words, never its secrets."""
    for name in ("leaky", "basic"):
        found = httpx.get(leaky.server.url(f"/agents/{name}"), timeout=10).json()
        last = found["health"]["last_error"]
        assert "answered 401" in last, last
        assert USEFUL in last, last
        assert _leaks(str(found)) == []


def test_the_deliberation_record_keeps_why_without_secrets(leaky: Leaky) -> None:
    """A deliberation's calls failed on the echoing upstream: each error says 401 and why."""
    record = httpx.get(leaky.server.url(f"/deliberation/{leaky.deliberation}"), timeout=10)
    errors = [p["error"] for r in record.json()["rounds"] for p in r["proposals"]]
    assert errors
    assert all("401" in e for e in errors), errors
    assert all(USEFUL in e for e in errors), errors
    assert _leaks(record.text) == []


def test_an_old_record_stored_with_secrets_is_read_out_redacted(leaky: Leaky) -> None:
    """A record stored before redaction is shown redacted, its useful words kept."""
    record = httpx.get(leaky.server.url(f"/deliberation/{OLD_ID}"), timeout=10)
    assert record.status_code == 200
    assert _leaks(record.text) == []
    assert "answered 401" in record.json()["error"]
    assert USEFUL in record.json()["error"]


READS: dict[str, tuple[str, ...]] = {
    "/agents": ("/agents",),
    "/agents/directory": ("/agents/directory", "/agents/directory?limit=2"),
    "/agents/{agent_id}": ("/agents/leaky", "/agents/basic", "/agents/closed"),
    "/admin/api/agents/stats": ("/admin/api/agents/stats",),
    "/dashboard": ("/dashboard",),
    "/dashboard/deliberations": ("/dashboard/deliberations",),
    "/dashboard/deliberations/new": ("/dashboard/deliberations/new",),
    "/dashboard/deliberations/{deliberation_id}": (
        "/dashboard/deliberations/{id}",
        f"/dashboard/deliberations/{OLD_ID}",
    ),
    "/dashboard/agents/{agent_id}": (
        "/dashboard/agents/leaky",
        "/dashboard/agents/basic",
        "/dashboard/agents/closed",
    ),
    "/dashboard/routing": ("/dashboard/routing",),
    "/dashboard/traffic": ("/dashboard/traffic",),
    "/deliberation/{deliberation_id}": ("/deliberation/{id}", f"/deliberation/{OLD_ID}"),
    "/deliberations": ("/deliberations", "/deliberations?limit=1000"),
    "/v1/models": ("/v1/models",),
    "/healthz": ("/healthz",),
    "/readyz": ("/readyz",),
    "/oracle/profiles/{agent_id}": ("/oracle/profiles/leaky", "/oracle/profiles/basic"),
    "/oracle/profiles/{agent_id}/history": ("/oracle/profiles/leaky/history",),
    "/oracle/leaderboard": ("/oracle/leaderboard",),
    "/oracle/agents/{agent_id}/validation-rate": ("/oracle/agents/leaky/validation-rate",),
    "/oracle/agents/{agent_id}/privileges": ("/oracle/agents/leaky/privileges",),
    "/skills": ("/skills",),
    "/skills/judges": ("/skills/judges",),
    "/routing/savings": ("/routing/savings",),
    "/agents/{agent_id}/skills": ("/agents/leaky/skills",),
    "/agents/{agent_id}/card": ("/agents/leaky/card", "/agents/basic/card", "/agents/closed/card"),
    "/.well-known/jwks.json": ("/.well-known/jwks.json",),
    "/metrics": ("/metrics",),
    "/openapi.json": ("/openapi.json",),
}
"""Every GET route of the API (``api/routes/``), with the reads fetched for it."""
NOT_READ = {
    "/agents/tasks/next": "a remote agent's long poll: it hands out tasks, no stored text",
}
"""The GET routes not fetched, and why."""
ABSENT = {"/agents/leaky/skills"}
"""Reads answered 404 here (no call of the agent was ever scored: no skill yet)."""


def _get_routes() -> set[str]:
    """The path of every GET route the API's route modules declare."""
    found = set()
    for module in pkgutil.iter_modules(routes.__path__):
        router = importlib.import_module(f"{routes.__name__}.{module.name}").router
        for route in router.routes:
            if "GET" in (getattr(route, "methods", None) or ()):
                found.add(route.path)
    return found


def test_every_get_route_is_read_by_this_test() -> None:
    """A new GET route fails this until it is added to READS (or NOT_READ, with why)."""
    declared = _get_routes()
    assert declared - set(READS) - set(NOT_READ) == set()
    assert set(NOT_READ) <= declared


def test_no_read_shows_a_secret(leaky: Leaky) -> None:
    """Every read (public, client-, admin-token) of every GET route shows no secret."""
    tokens = {"/v1/models": CLIENT, "/admin/api/agents/stats": ADMIN}
    read = 0
    for template, paths in READS.items():
        token = tokens.get(template)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        for path in paths:
            url = leaky.server.url(path.replace("{id}", leaky.deliberation))
            answer = httpx.get(url, headers=headers, timeout=30)
            expected = 404 if path in ABSENT else 200
            assert answer.status_code == expected, (path, answer.status_code, answer.text[:300])
            assert _leaks(answer.text) == [], (path, _leaks(answer.text))
            read += 1
    assert read == sum(len(p) for p in READS.values())
    page = httpx.get(leaky.server.url("/dashboard/agents/basic"), timeout=30).text
    assert "answered 401" in page
    assert USEFUL in page


@pytest.mark.parametrize("kind", ["deliberations", "judgments", "skills", "ledger"])
def test_exports_show_no_secret(leaky: Leaky, kind: str) -> None:
    """`agentladder export` of each kind, beside the running server, shows no secret."""
    exported = subprocess.run(
        [sys.executable, "-m", "agentladder.cli", "export", kind, "--config",
         str(leaky.folder / "agents.yaml"), "--db", str(leaky.folder / "served.db")],
        check=False, capture_output=True, text=True, timeout=120, env=dict(os.environ),
    )  # fmt: skip
    assert exported.returncode == 0, exported.stderr
    assert _leaks(exported.stdout + exported.stderr) == []
    if kind == "deliberations":
        assert OLD_ID in exported.stdout
        assert USEFUL in exported.stdout


def test_the_servers_log_shows_no_secret(leaky: Leaky) -> None:
    """What the served process printed (its log and access log) holds no secret."""
    output = leaky.server.output()
    assert "Application startup complete." in output
    assert _leaks(output) == []
