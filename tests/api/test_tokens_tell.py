"""Tokens that tell, against real served instances: no token and a token matching none get
different 401s (the API, the client, ``route --server``), a role that may not gets a 403
naming the roles its route declares, a refused connection says where and what to check,
and tokens whose variables are unset are told by ``config check`` and by ``serve``."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agentladder.api.auth import NO_MATCH
from agentladder.client import AsyncLadder, Forbidden, Ladder, Unauthorized, Unavailable
from tests.served import Server, free_port, start_agents, start_server, stop_agents

ADMIN = "tell-admin-token-0123456789"
ORCH = "tell-orchestrator-token-0123456789"
CLIENT = "tell-client-token-0123456789"
WRONG = "tell-wrong-token-0123456789"
CONFIG = f"""
agents:
  - name: sim_a
    capability_tags: [code]
    backend: {{kind: simulated, quality: 7.0}}
  - name: sim_b
    capability_tags: [code]
    backend: {{kind: simulated, quality: 9.0}}
api:
  tokens:
    - {{role: admin, token: {ADMIN}}}
    - {{role: orchestrator, token: {ORCH}}}
    - {{role: client, token: {CLIENT}, name: team}}
"""
JUDGMENT = {"agent_id": "sim_a", "contract_id": "tell-1", "score": 5.0}
NEEDS_TOKEN = (
    "POST /oracle/judgments needs a bearer token (role orchestrator or admin); send"
    " 'Authorization: Bearer <token>'"
)
NEEDS_ROLE = "POST /oracle/judgments needs role orchestrator or admin; this token's role is client"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One served instance with an admin, an orchestrator and a client token."""
    server = start_server(tmp_path_factory.mktemp("tell"), CONFIG)
    try:
        yield server
    finally:
        server.stop()


def bearer(token: str) -> dict[str, str]:
    """The Authorization header of ``token``."""
    return {"authorization": f"Bearer {token}"}


def test_the_api_tells_no_token_from_a_wrong_one_and_names_the_roles(served: Server) -> None:
    """POST /oracle/judgments: no token names the roles; a wrong token says it matches
    none, without echoing it; a client token's 403 names the roles that may and its own.
    A read refused by its own check (fresh=true) names its role too."""
    url = served.url("/oracle/judgments")
    none = httpx.post(url, json=JUDGMENT, timeout=10)
    wrong = httpx.post(url, json=JUDGMENT, headers=bearer(WRONG), timeout=10)
    role = httpx.post(url, json=JUDGMENT, headers=bearer(CLIENT), timeout=10)
    assert [none.status_code, wrong.status_code, role.status_code] == [401, 401, 403]
    assert none.json()["error"]["message"] == NEEDS_TOKEN
    assert (
        wrong.json()["error"]["message"]
        == NO_MATCH
        == ("the bearer token matches no configured token")
    )
    assert WRONG not in wrong.text
    assert role.json()["error"]["message"] == NEEDS_ROLE
    heartbeat = httpx.post(served.url("/agents/heartbeat"), json={"name": "x"}, timeout=10)
    assert heartbeat.json()["error"]["message"].startswith(
        "POST /agents/heartbeat needs a bearer token (role agent or admin)"
    )
    fresh = httpx.get(served.url("/skills"), params={"fresh": "true"}, headers=bearer(ORCH),
                      timeout=10)  # fmt: skip
    assert fresh.status_code == 403
    assert fresh.json()["error"]["message"] == (
        "fresh=true (a fit first) needs role admin; this token's role is orchestrator"
    )


def test_the_client_shows_each_refusal_in_one_line(served: Server) -> None:
    """Ladder and AsyncLadder: Unauthorized with the server's two messages, Forbidden
    naming the roles."""
    with Ladder(served.base) as nobody, pytest.raises(Unauthorized) as none:
        nobody.judge(**JUDGMENT)  # type: ignore[arg-type]
    with Ladder(served.base, token=WRONG) as wrong, pytest.raises(Unauthorized) as unknown:
        wrong.judge(JUDGMENT)
    with Ladder(served.base, token=CLIENT) as client, pytest.raises(Forbidden) as forbidden:
        client.route(task_type="code")
    assert str(none.value) == (
        f"401 unauthorized: {NEEDS_TOKEN}; this client has no token: give it one, Ladder(url,"
        " token=...)"
    )
    assert str(unknown.value) == f"401 unauthorized: {NO_MATCH}"
    assert WRONG not in str(unknown.value)
    assert str(forbidden.value) == (
        "403 forbidden: POST /route needs role orchestrator or admin; this token's role is client"
    )

    async def main() -> str:
        async with AsyncLadder(served.base, token=CLIENT) as client:
            with pytest.raises(Forbidden) as refused:
                await client.judge(JUDGMENT)
        return str(refused.value)

    assert asyncio.run(main()) == f"403 forbidden: {NEEDS_ROLE}"


def route_cli(server: str, token: str | None) -> subprocess.CompletedProcess[str]:
    """``agentladder route --task-type code --server SERVER`` with ``token`` (or none) in
    AGENTLADDER_TOKEN."""
    env = {k: v for k, v in os.environ.items() if k != "AGENTLADDER_TOKEN"}
    if token is not None:
        env["AGENTLADDER_TOKEN"] = token
    return subprocess.run(
        [sys.executable, "-m", "agentladder.cli", "route", "--task-type", "code", "--server",
         server], capture_output=True, text=True, timeout=60, env=env, check=False,
    )  # fmt: skip


def test_route_server_tells_the_token_problems(served: Server) -> None:
    """route --server: no token names the variable to set, a wrong token says it matches
    none (naming the variable it came from), a client token names the roles; one line
    each, exit 1; an orchestrator's token routes."""
    none = route_cli(served.base, None)
    wrong = route_cli(served.base, WRONG)
    role = route_cli(served.base, CLIENT)
    fine = route_cli(served.base, ORCH)
    where = f"--server {served.base}"
    assert none.stderr == (
        f"error: {where}: 401 unauthorized: POST /route needs a bearer token (role orchestrator"
        " or admin); send 'Authorization: Bearer <token>' (set AGENTLADDER_TOKEN, or name"
        " another variable with --token-env)\n"
    )
    assert wrong.stderr == (
        f"error: {where}: 401 unauthorized: {NO_MATCH} (the token is AGENTLADDER_TOKEN's)\n"
    )
    assert WRONG not in wrong.stderr
    assert role.stderr == (
        f"error: {where}: 403 forbidden: POST /route needs role orchestrator or admin; this"
        " token's role is client\n"
    )
    assert [none.returncode, wrong.returncode, role.returncode] == [1, 1, 1]
    assert fine.returncode == 0, fine.stderr
    assert "sim_b" in fine.stdout


def test_a_refused_connection_says_where_and_what_to_check() -> None:
    """Nothing listens on the port: the client (sync and async, a name resolving to
    several addresses too) and route --server say so in one line, not httpx's "All
    connection attempts failed"."""
    port = free_port()
    told = (
        f"could not connect to http://127.0.0.1:{port} (connection refused): is `agentladder"
        " serve` running there?"
    )
    with (
        Ladder(f"http://127.0.0.1:{port}", retries=0) as ladder,
        pytest.raises(Unavailable) as refused,
    ):
        ladder.profile("sim_a")
    assert str(refused.value) == f"no_answer: {told}"

    async def main() -> str:
        async with AsyncLadder(f"http://localhost:{port}", retries=0) as ladder:
            with pytest.raises(Unavailable) as failed:
                await ladder.route(task_type="code")
        return failed.value.message

    assert asyncio.run(main()) == told.replace("127.0.0.1", "localhost")
    cli = route_cli(f"http://127.0.0.1:{port}", ORCH)
    assert cli.returncode == 1
    assert cli.stderr == f"error: --server http://127.0.0.1:{port}: no_answer: {told}\n"


UNSET = """
agents:
  - name: sim_a
    backend: {kind: simulated, quality: 7.0}
api:
  tokens:
    - {role: admin, token_env: TELL_ADMIN_TOKEN}
    - {role: orchestrator, token_env: TELL_ORCH_TOKEN}
"""


def config_check(path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``agentladder config check PATH`` with ``env``."""
    return subprocess.run(
        [sys.executable, "-m", "agentladder.cli", "config", "check", str(path)],
        capture_output=True, text=True, timeout=60, env=env, check=False,
    )  # fmt: skip


def test_unset_token_variables_are_told_by_config_check_and_serve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both variables unset: config check warns for each (role and variable) and says
    serve accepts no write; serve logs the same at start and refuses a loopback write.
    The admin's set: only that is told, and what serve accepts."""
    monkeypatch.delenv("TELL_ADMIN_TOKEN", raising=False)
    monkeypatch.delenv("TELL_ORCH_TOKEN", raising=False)
    path = tmp_path / "unset.yaml"
    path.write_text(UNSET, encoding="utf-8")
    told = [
        "the admin token's variable TELL_ADMIN_TOKEN is not set: that token is disabled",
        "the orchestrator token's variable TELL_ORCH_TOKEN is not set: that token is disabled",
        "no token is set: serve will accept no write at all (tokens are configured, so"
        " loopback clients are not trusted either); reads stay open",
    ]
    checked = config_check(path, dict(os.environ))
    assert checked.returncode == 0, checked.stderr
    assert [line.removeprefix("warning: ") for line in checked.stdout.splitlines()[2:]] == told
    server = start_server(tmp_path, UNSET)
    try:
        refused = httpx.post(server.url("/oracle/judgments"), json=JUDGMENT, timeout=10)
    finally:
        log = server.stop()
    assert refused.status_code == 401
    for line in told:
        assert line in log.splitlines()
    one = config_check(path, {**os.environ, "TELL_ADMIN_TOKEN": ADMIN})
    assert [line.removeprefix("warning: ") for line in one.stdout.splitlines()[2:]] == [
        told[1],
        "only the admin token is set: serve will accept writes with admin tokens only",
    ]


AGENT_CONFIG = """
orchestrator:
  heartbeat_interval_s: 0.2
agents:
  - name: far_a
    remote: true
    backend: {kind: simulated, quality: 6.5}
"""


def test_an_agent_process_says_it_cannot_connect(tmp_path: Path) -> None:
    """``agentladder agent --server`` with nothing listening logs where it could not
    connect and what to check, and keeps trying until stopped."""
    (tmp_path / "agents.yaml").write_text(AGENT_CONFIG, encoding="utf-8")
    nobody = f"http://127.0.0.1:{free_port()}"
    agents = start_agents(tmp_path, ["far_a"], ["--server", nobody])
    told = (
        f"heartbeat not delivered: could not connect to {nobody} (connection refused): is"
        " `agentladder serve` running there?"
    )
    log = tmp_path / "agents.log"
    try:
        deadline = time.monotonic() + 20
        while told not in log.read_text(encoding="utf-8") and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        stop_agents(tmp_path, agents)
    assert told in log.read_text(encoding="utf-8")
    assert "All connection attempts failed" not in log.read_text(encoding="utf-8")
