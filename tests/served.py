"""A real `agentladder serve` process on loopback for the tests that need one.

It logs to a file (a pipe nobody drains fills up and blocks the server under load) and is
stopped by its pid with SIGTERM.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

__all__ = ["Server", "free_port", "start_agents", "start_serve", "start_server", "stop_agents"]


def free_port() -> int:
    """A TCP port free on loopback right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Server:
    """A running `agentladder serve`: its address, process and log."""

    base: str
    process: subprocess.Popen[str]
    log: Path

    def output(self) -> str:
        """What the server printed so far."""
        return self.log.read_text(encoding="utf-8", errors="replace")

    def url(self, path: str) -> str:
        """The absolute URL of ``path``."""
        return self.base + path

    def stop(self) -> str:
        """SIGTERM by pid, wait, check the graceful shutdown; everything it printed."""
        os.kill(self.process.pid, signal.SIGTERM)
        _reap(self.process, self.log)
        output = self.output()
        # uvicorn shuts down gracefully, then re-raises the signal it was stopped by
        assert self.process.returncode in (0, -signal.SIGTERM), output[-2000:]
        assert "Application shutdown complete." in output
        return output

    def kill(self) -> None:
        """SIGKILL by pid (a crash: no shutdown runs), then reap the process."""
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def deliberate(self, agents: list[str], scope: str = "quick", **extra: Any) -> str:
        """Start a deliberation through the API; its id."""
        body = {"user_query": "Which controls matter most?", "agent_names": agents, "scope": scope}
        started = httpx.post(self.url("/deliberation"), json={**body, **extra}, timeout=10)
        assert started.status_code == 202, started.text
        identifier: str = started.json()["deliberation_id"]
        return identifier

    def settled(self, identifier: str) -> dict[str, Any]:
        """Wait until the deliberation's ranking and judgments are applied; its record."""
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            record: dict[str, Any] = httpx.get(self.url(f"/deliberation/{identifier}")).json()
            if record["ranking"]["state"] == record["judgments"]["state"] == "applied":
                return record
            time.sleep(0.05)
        raise AssertionError(f"deliberation {identifier} did not settle: {record}")


def _reap(process: subprocess.Popen[str], log: Path, timeout_s: float = 30) -> int:
    """Wait for a signalled process; one still running after ``timeout_s`` is killed and
    reaped, and the test fails with the end of its log (not with a process left behind)."""
    try:
        return process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        tail = log.read_text(encoding="utf-8", errors="replace")[-3000:]
        raise AssertionError(f"pid {process.pid} did not stop in {timeout_s} s:\n{tail}") from None


def start_server(
    folder: Path,
    config: str,
    db: str = "served.db",
    port: int | None = None,
    store: str | None = None,
    ready: bool = True,
    extra: tuple[str, ...] = (),
) -> Server:
    """`agentladder serve` with the YAML ``config`` over SQLite ``folder/db`` (``--db``; or
    the ``store`` URL, ``--store``), once it answers ``/readyz`` (or ``/healthz`` when not
    ``ready``); ``extra``: more arguments of ``serve``."""
    path = folder / "agents.yaml"
    path.write_text(config, encoding="utf-8")
    where = ["--store", store] if store else ["--db", str(folder / db)]
    return start_serve(folder, ["--config", str(path), *where, *extra], port=port, ready=ready)


def start_serve(
    folder: Path, args: list[str], port: int | None = None, ready: bool = True
) -> Server:
    """`agentladder serve ARGS --port P` logging into ``folder``, once it answers ``/readyz``
    (or ``/healthz`` when not ``ready``)."""
    port = port or free_port()
    log = folder / f"server-{port}-{time.monotonic_ns()}.log"
    with log.open("w", encoding="utf-8") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "agentladder.cli", "serve", *args, "--port", str(port)],
            stdout=out, stderr=subprocess.STDOUT, text=True, env=dict(os.environ),
        )  # fmt: skip
    served = Server(f"http://127.0.0.1:{port}", process, log)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        try:
            probe = "/readyz" if ready else "/healthz"
            if httpx.get(served.url(probe), timeout=1).status_code == 200:
                return served
        except httpx.HTTPError:
            time.sleep(0.05)
    process.kill()
    process.wait()
    raise AssertionError(f"the server did not start: {served.output()[-2000:]}")


def start_agents(
    folder: Path,
    names: list[str],
    server_args: list[str],
    env: dict[str, dict[str, str]] | None = None,
) -> list[subprocess.Popen[str]]:
    """`agentladder agent` processes for ``names`` of ``folder/agents.yaml`` joining
    ``server_args`` (``--server URL ...``), logging to ``folder/agents.log``."""
    log = (folder / "agents.log").open("a", encoding="utf-8")
    command = [sys.executable, "-m", "agentladder.cli", "agent", "--config",
               str(folder / "agents.yaml"), *server_args]  # fmt: skip
    try:
        return [
            subprocess.Popen(
                [*command, "--name", name],
                stdout=log,
                stderr=subprocess.STDOUT,
                text=True,
                env={**os.environ, **(env or {}).get(name, {})},
            )
            for name in names
        ]
    finally:
        log.close()  # each process holds its own copy


def stop_agents(folder: Path, processes: list[subprocess.Popen[str]]) -> None:
    """SIGTERM each by pid; each must exit 0 (else what they logged is shown)."""
    for process in processes:
        process.send_signal(signal.SIGTERM)
    log_path = folder / "agents.log"
    codes = [_reap(process, log_path) for process in processes]
    log = log_path.read_text(encoding="utf-8")
    assert codes == [0] * len(processes), log[-2000:]


def seed_scores(
    server: Server, scores: dict[str, float], token: str | None = None, count: int = 12
) -> None:
    """``count`` judgments at ``audit`` of each agent at its score (``seed-<agent>-<i>``),
    one batch, so that routing orders the agents by them."""
    judgments = [
        {"agent_id": agent, "contract_id": f"seed-{agent}-{i}", "task_type": "audit",
         "score": score}
        for agent, score in scores.items() for i in range(count)
    ]  # fmt: skip
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    posted = httpx.post(
        server.url("/oracle/judgments/batch"), json={"judgments": judgments}, headers=headers,
        timeout=30,
    )  # fmt: skip
    assert posted.status_code == 200, posted.text
