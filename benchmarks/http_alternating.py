"""``POST /oracle/judgments``: this code against another tree of agentladder and the bare
app, served side by side, in alternating rounds, with each server's CPU time per request.

``bench_http``'s pieces (its 1,000 registered agents, Lua script and bare app): three
servers on loopback, a 2 s warm-up each, then per round wrk (2 threads, 32 connections,
10 s) on the bare app, then on before and after in an order that alternates by round,
each load once every server is idle (``bench_http._settle``: agentladder's background
fit of the judgments just written would otherwise run during the next load). The
CPU time of each server process (all its threads, ``/proc/<pid>/stat``) is divided by the
requests it answered: on a machine shared with other work the ratio of requests per
second also measures the scheduler's shares (the bare app's thread pool keeps up to 32
threads runnable, agentladder two), CPU per request does not.

Run: ``.venv/bin/python -m benchmarks.http_alternating BEFORE_SRC [ROUNDS]``, where
BEFORE_SRC is the ``src`` folder of the other tree (``git archive <commit> src | tar -x``).
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.bench_http import LUA, _bare_db, _register, _settle, _start, cpu_s, run_args
from tests.served import free_port

WRK = ["wrk", "-t2", "-c32"]


def _load(url: str, script: Path, pid: int) -> tuple[float, float]:
    """Requests per second, and CPU microseconds per request, of one 10 s wrk run."""
    start = cpu_s(pid)
    args = [*WRK, "-d10s", "-s", str(script), url, *run_args()]
    out = subprocess.run(args, capture_output=True, text=True, check=True, timeout=60).stdout
    spent = cpu_s(pid) - start
    answered = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    return rps, spent / max(answered, 1) * 1e6


def main(before_src: str, rounds: int) -> None:
    """Serve the three, load them in alternating rounds, print each round and the medians."""
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        script = base / "judgments.lua"
        script.write_text(LUA)
        servers: dict[str, tuple[int, subprocess.Popen[bytes]]] = {}
        try:
            for name, src in (("before", before_src), ("after", None)):
                db = base / f"{name}.db"
                asyncio.run(_register(db))
                env = {**os.environ, "PYTHONPATH": src} if src else dict(os.environ)
                port = free_port()
                args = [sys.executable, "-m", "agentladder.cli", "serve", "--port", str(port),
                        "--store", f"sqlite:///{db}"]  # fmt: skip
                servers[name] = (port, _start(args, port, base / f"{name}.log", env))
            _bare_db(base / "bare.db", [])
            env = {**os.environ, "BARE_DB": str(base / "bare.db"), "BARE_SYNC": "FULL"}
            port = free_port()
            args = [sys.executable, "-m", "uvicorn", "benchmarks.bare_app:app", "--port",
                    str(port), "--log-level", "warning"]  # fmt: skip
            servers["bare"] = (port, _start(args, port, base / "bare.log", env))
            for port, _ in servers.values():
                warm = [*WRK, "-d2s", "-s", str(script), f"http://127.0.0.1:{port}/", *run_args()]
                subprocess.run(warm, capture_output=True, check=True, timeout=60)
            ratios: dict[str, list[float]] = {"before": [], "after": []}
            cpu: dict[str, list[float]] = {"bare": [], "before": [], "after": []}
            for number in range(rounds):
                order = ("before", "after") if number % 2 == 0 else ("after", "before")
                got = {}
                for name in ("bare", *order):
                    _settle([process for _, process in servers.values()])
                    port, process = servers[name]
                    got[name] = _load(f"http://127.0.0.1:{port}/", script, process.pid)
                    cpu[name].append(got[name][1])
                for name, found in ratios.items():
                    found.append(got[name][0] / got["bare"][0])
                shown = ", ".join(f"{k} {v[0]:,.0f} req/s {v[1]:,.0f} µs" for k, v in got.items())
                before, after = ratios["before"][-1], ratios["after"][-1]
                print(f"round {number} (load {os.getloadavg()[0]:.1f}): {shown} CPU a request;"
                      f" ratios before {before:.2f}, after {after:.2f}")  # fmt: skip
            print("medians: ratio before {:.2f}, after {:.2f}; CPU µs per request {}".format(
                statistics.median(ratios["before"]), statistics.median(ratios["after"]),
                {k: round(statistics.median(v)) for k, v in cpu.items()}))  # fmt: skip
        finally:
            for _, process in servers.values():
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=30)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5)
