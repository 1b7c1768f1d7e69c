"""The smaller limits against a real `agentladder serve` on loopback: the busy message's
counts, a short token from ``token_env``, the cap on an agent's long polls, tasks whose
asker gave up, duplicate JSON keys and two Authorization headers."""

from __future__ import annotations

import concurrent.futures
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.served import Server, free_port, start_server

ORCH = "small-orchestrator-token-0123456789"
FAR = {"far1": "small-far1-token-0123456789", "far2": "small-far2-token-0123456789"}


def _config(orchestrator: str = "", api: str = "", timeout_s: float = 3) -> str:
    return f"""
agents:
  - name: far1
    remote: true
    backend: {{kind: simulated, quality: 7.0}}
  - name: far2
    remote: true
    backend: {{kind: simulated, quality: 8.0}}
orchestrator: {{timeout_s: {timeout_s}{orchestrator}}}
api:
  tokens:
    - {{role: orchestrator, token: {ORCH}}}
    - {{role: agent, token: {FAR["far1"]}, agent_id: far1}}
    - {{role: agent, token: {FAR["far2"]}, agent_id: far2}}
{api}"""


def _as(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def _online(server: Server) -> None:
    """Both remote agents heartbeat (and never answer a task)."""
    for name, token in FAR.items():
        beat = httpx.post(server.url("/agents/heartbeat"), json={"name": name},
                          headers=_as(token), timeout=10)  # fmt: skip
        assert beat.status_code == 200, beat.text


def _deliberate(server: Server, scope: str = "standard") -> httpx.Response:
    body = {"user_query": "Which controls matter most?", "agent_names": ["far1", "far2"],
            "scope": scope}  # fmt: skip
    return httpx.post(server.url("/deliberation"), json=body, headers=_as(ORCH), timeout=30)


def _gauge(server: Server, name: str) -> float | None:
    text = httpx.get(server.url("/metrics"), timeout=10).text
    found = re.search(rf"^{name} (\S+)$", text, re.M)
    return None if found is None else float(found.group(1))


def test_the_busy_message_counts_every_admitted_deliberation(tmp_path: Path) -> None:
    """12 deliberations at once with room for 2: each 503 ``busy`` says 2 are admitted,
    and its running, waiting and being-prepared counts add up to 2."""
    server = start_server(tmp_path, _config(", max_running: 1, max_waiting: 1"))
    try:
        _online(server)
        with concurrent.futures.ThreadPoolExecutor(12) as pool:
            answers = list(pool.map(lambda _: _deliberate(server), range(12)))
        assert sorted(a.status_code for a in answers) == [202] * 2 + [503] * 10
        for refused in (a for a in answers if a.status_code == 503):
            message = refused.json()["error"]["message"]
            counts = re.match(
                r"(\d+) deliberations admitted on this instance \((\d+) running,"
                r" (\d+) waiting for a slot, (\d+) being prepared\)", message,
            )  # fmt: skip
            assert counts is not None, message
            admitted, *parts = (int(n) for n in counts.groups())
            assert admitted == 2
            assert sum(parts) == 2
    finally:
        server.stop()


def test_a_short_token_from_its_variable_stops_serve(tmp_path: Path) -> None:
    """A ``token_env`` holding 5 characters: serve exits 1 with one line naming the entry
    and the variable (not the value), before anything is opened."""
    path = tmp_path / "agents.yaml"
    path.write_text("api:\n  tokens:\n    - {role: admin, token_env: SHORT_TOKEN}\n")
    done = subprocess.run(
        [sys.executable, "-m", "agentladder.cli", "serve", "--config", str(path),
         "--db", str(tmp_path / "x.db"), "--port", str(free_port())],
        check=False, capture_output=True, text=True, timeout=60,
        env={**os.environ, "SHORT_TOKEN": "abcde"},
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "api.tokens[0].token_env" in output
    assert "SHORT_TOKEN" in output
    assert "abcde" not in output
    assert "Traceback" not in output
    assert not (tmp_path / "x.db").exists()


def test_one_agent_holds_at_most_its_cap_of_long_polls(tmp_path: Path) -> None:
    """With ``api.max_polls_per_agent: 2``, a third poll of the same agent while two wait
    is refused 429 ``too_many_polls``; the other agent may still poll."""
    server = start_server(tmp_path, _config(api="  max_polls_per_agent: 2\n"))
    try:

        def poll(name: str, wait_s: float) -> httpx.Response:
            return httpx.get(server.url("/agents/tasks/next"), headers=_as(FAR[name]),
                             params={"agent_id": name, "wait_s": wait_s}, timeout=30)  # fmt: skip

        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            holding = [pool.submit(poll, "far1", 4) for _ in range(2)]
            time.sleep(1)  # both polls reach the server and wait
            third = poll("far1", 0)
            other = poll("far2", 0)
            held = [f.result().status_code for f in holding]
        assert third.status_code == 429, third.text
        assert third.json()["error"]["code"] == "too_many_polls"
        assert other.status_code == 204
        assert held == [204, 204]
        assert poll("far1", 0).status_code == 204  # the cap counts polls waiting now
    finally:
        server.stop()


def test_a_task_whose_asker_gave_up_leaves_the_queue(tmp_path: Path) -> None:
    """A deliberation of two remote agents that never poll: their tasks are queued while
    it waits, and none is left queued once it has given up (timed out)."""
    server = start_server(tmp_path, _config(timeout_s=2))
    try:
        _online(server)
        started = _deliberate(server, "quick")
        assert started.status_code == 202, started.text
        identifier = started.json()["deliberation_id"]
        time.sleep(0.5)
        assert _gauge(server, "agentladder_agent_tasks_queued") == 2
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            record = httpx.get(server.url(f"/deliberation/{identifier}"), timeout=10).json()
            if record["status"] not in ("queued", "running"):
                break
            time.sleep(0.2)
        assert record["status"] in ("completed", "failed"), record  # no answer came
        assert _gauge(server, "agentladder_agent_tasks_queued") == 0
    finally:
        server.stop()


def test_duplicate_keys_and_two_authorization_headers_are_refused(tmp_path: Path) -> None:
    """A judgment naming ``score`` twice and one with two Authorization headers: both 400
    and nothing stored; the same judgment written once is accepted."""
    server = start_server(tmp_path, _config())
    try:
        url = server.url("/oracle/judgments")
        twice = b'{"agent_id": "far1", "contract_id": "c-1", "score": 1.0, "score": 10.0}'
        headers = {**_as(ORCH), "content-type": "application/json"}
        duplicate = httpx.post(url, content=twice, headers=headers, timeout=10)
        assert duplicate.status_code == 400, duplicate.text
        assert '"score"' in duplicate.json()["error"]["message"]
        judgment = {"agent_id": "far1", "contract_id": "c-1", "score": 10.0}
        two = httpx.Headers([("authorization", f"Bearer {ORCH}"),
                             ("authorization", "Bearer someone-else-0123456789")])  # fmt: skip
        doubled = httpx.post(url, json=judgment, headers=two, timeout=10)
        assert doubled.status_code == 400, doubled.text
        assert httpx.get(server.url("/oracle/profiles/far1"), timeout=10).json()["xp"] == 0
        once = httpx.post(url, json=judgment, headers=_as(ORCH), timeout=10)
        assert once.status_code == 200, once.text
    finally:
        server.stop()
