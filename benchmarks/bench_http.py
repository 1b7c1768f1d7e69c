"""HTTP throughput of ``agentladder serve`` against a bare FastAPI app, same run, with wrk.

Both serve on loopback from their own process (uvicorn, one worker) over SQLite in WAL
with synchronous=FULL. ``POST /oracle/judgments`` (a new contract per request over 1,000
agents) and ``GET /agents`` with 1,000 registered agents; wrk with 2 threads and 32
connections for 30 s each. Targets: agentladder at least 0.8 of the bare app's requests/s
on judgments, 0.7 on the listing, like for like: each side with the same logging.
agentladder runs as configured by default (uvicorn's access log: a line per request) and
is compared with the bare app with uvicorn's access log on (``--log-level info``, the
line to its log file as agentladder's); and again with ``api.access_log: false`` over a
copy of its store, compared with the bare app without it (``--log-level warning``).
Each load starts once every server is idle (``_settle``): agentladder fits the skill of
the judgments just written in the background, which ran during the next server's load.

Run: ``.venv/bin/python -m benchmarks http`` (needs ``wrk``: ``apt-get install wrk``).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx

from agentladder.domain.agents import AgentConfig
from agentladder.store.records import Registration
from agentladder.store.sqlite.store import SqliteStore
from tests.served import free_port

AGENTS = 1000
LUA = """
-- each thread has its own Lua state and the same random sequence, and so has each run of
-- wrk: the thread's number keeps the contracts of two threads apart, and the run's id
-- (wrk's argument after "--", ``run_args``) those of two runs (without them, a thread or a
-- run sent the contracts another had sent, which agentladder answers as repeats)
local threads = 0
run = "0"
function init(args)
  run = args[1] or "0"
end
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
counter = 0
request = function()
  counter = counter + 1
  local body = string.format(
    '{"agent_id":"agent-%d","contract_id":"c-%s-%d-%d-%d","score":8.5}',
    counter % 1000, run, tid, math.random(1, 1000000000), counter)
  return wrk.format("POST", "/oracle/judgments", {["Content-Type"]="application/json"}, body)
end
"""


async def _register(db: Path) -> None:
    store = SqliteStore(db, synchronous="full")
    try:
        for i in range(AGENTS):
            config = AgentConfig(name=f"agent-{i}", capability_tags=("audit",))
            await store.put_registration(Registration(config=config, first_seen=time.time(),
                                                      last_seen=time.time() + 3600))  # fmt: skip
    finally:
        await store.close()


def _bare_db(db: Path, agents: list[str]) -> None:
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE p (id TEXT PRIMARY KEY, xp INTEGER)")
    conn.execute(
        "CREATE TABLE h (id INTEGER PRIMARY KEY AUTOINCREMENT,"
        " agent_id TEXT, contract_id TEXT, xp INTEGER)"
    )
    conn.execute("CREATE TABLE agents (name TEXT PRIMARY KEY, doc TEXT)")
    rows = [(f"agent-{i:04d}", doc) for i, doc in enumerate(agents)]
    conn.executemany("INSERT INTO agents VALUES (?, ?)", rows)
    conn.commit()
    conn.close()


def _start(args: list[str], port: int, log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(args, stdout=log.open("w"), stderr=subprocess.STDOUT, env=env)
    for _ in range(300):
        try:
            httpx.get(f"http://127.0.0.1:{port}/agents", timeout=1)
            return process
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError(log.read_text()[-2000:])


def _wrk(url: str, script: Path | None, pid: int) -> tuple[float, str, str, float, float]:
    """Requests per second, p50, p99, the server's CPU microseconds per request (all its
    threads) and those of its event loop's thread (the process's main thread), of 30 s
    after a warm-up of 2 s (a server's first requests load what it builds lazily: each
    server gets the same). 30 s, not 10: agentladder's background skill fit takes a few
    seconds at most every tenth of the time (``services/container.py``), and whether one
    fell inside a 10 s load or not moved its figure by a quarter."""
    args = ["wrk", "-t2", "-c32", "--latency"]
    if script is not None:
        args += ["-s", str(script)]
    warm = [*args, "-d2s", url, *run_args()]
    subprocess.run(warm, capture_output=True, check=True, timeout=60)
    args += ["-d30s", url, *run_args()]
    start, loop_start = cpu_s(pid), cpu_s(pid, pid)
    out = subprocess.run(args, capture_output=True, text=True, check=True, timeout=120).stdout
    spent, loop_spent = cpu_s(pid) - start, cpu_s(pid, pid) - loop_start
    answered = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    # the latency distribution's lines, not a "+/- Stdev" figure such as 68.50%
    p50 = re.search(r"^\s+50%\s+(\S+)", out, re.M).group(1)  # type: ignore[union-attr]
    p99 = re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1)  # type: ignore[union-attr]
    return rps, p50, p99, spent / max(answered, 1) * 1e6, loop_spent / max(answered, 1) * 1e6


def run_args() -> list[str]:
    """wrk's arguments for the script of a new run: an id no other run has (``LUA``)."""
    return ["--", uuid.uuid4().hex[:12]]


def cpu_s(pid: int, thread: int | None = None) -> float:
    """User and system CPU seconds of the process, all threads (or of its ``thread``)."""
    path = f"/proc/{pid}/stat" if thread is None else f"/proc/{pid}/task/{thread}/stat"
    fields = Path(path).read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _settle(servers: list[subprocess.Popen[bytes]], limit_s: float = 120.0) -> None:
    """Wait until the servers are idle (under 5% of a core over a second, at most
    ``limit_s``): a server's background work after a load (agentladder's skill fit of the
    judgments just written) would otherwise run during the next server's measurement."""
    deadline = time.monotonic() + limit_s
    before = sum(cpu_s(server.pid) for server in servers)
    while time.monotonic() < deadline:
        time.sleep(1.0)
        now = sum(cpu_s(server.pid) for server in servers)
        if now - before < 0.05:
            return
        before = now


def main() -> None:
    """Serve both, load both, print requests/s, p50 and p99 and the ratios."""
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        asyncio.run(_register(base / "agentladder.db"))
        script = base / "judgments.lua"
        script.write_text(LUA)
        env = {**os.environ, "BARE_DB": str(base / "bare.db"), "BARE_SYNC": "FULL"}
        quiet_config = base / "quiet.yaml"
        quiet_config.write_text("api:\n  access_log: false\n")
        ours, quiet, bare, logged = free_port(), free_port(), free_port(), free_port()
        store = f"sqlite:///{base / 'agentladder.db'}"
        shutil.copy(base / "agentladder.db", base / "quiet.db")  # a store of its own each
        servers = [
            _start([sys.executable, "-m", "agentladder.cli", "serve", "--port", str(ours),
                    "--store", store], ours, base / "a.log", env),
            _start([sys.executable, "-m", "agentladder.cli", "serve", "--port", str(quiet),
                    "--db", str(base / "quiet.db"), "--config", str(quiet_config)], quiet,
                   base / "q.log", env),
            _start([sys.executable, "-m", "uvicorn", "benchmarks.bare_app:app", "--port", str(bare),
                    "--log-level", "warning"], bare, base / "b.log", env),
            _start([sys.executable, "-m", "uvicorn", "benchmarks.bare_app:app", "--port",
                    str(logged), "--log-level", "info"], logged, base / "bl.log", env),
        ]  # fmt: skip
        try:
            listed = httpx.get(f"http://127.0.0.1:{ours}/agents", timeout=30).json()["agents"]
            _bare_db(base / "bare.db", [json.dumps(a, separators=(",", ":")) for a in listed])
            loads = (("POST /oracle/judgments", "/", script, 0.8),
                     ("GET /agents (1,000 agents)", "/agents", None, 0.7))  # fmt: skip
            for name, path, lua, target in loads:
                _settle(servers)
                ours_rps, ours_p50, ours_p99, ours_us, ours_loop = _wrk(
                    f"http://127.0.0.1:{ours}{path}", lua, servers[0].pid
                )
                _settle(servers)
                quiet_rps, _, _, quiet_us, quiet_loop = _wrk(
                    f"http://127.0.0.1:{quiet}{path}", lua, servers[1].pid
                )
                _settle(servers)
                bare_rps, bare_p50, bare_p99, bare_us, bare_loop = _wrk(
                    f"http://127.0.0.1:{bare}{path}", lua, servers[2].pid
                )
                _settle(servers)
                logged_rps, _, _, logged_us, logged_loop = _wrk(
                    f"http://127.0.0.1:{logged}{path}", lua, servers[3].pid
                )
                ratio = ours_rps / logged_rps
                quiet_ratio = quiet_rps / bare_rps
                verdict = "meets" if min(ratio, quiet_ratio) >= target else "MISSES"
                print(f"{name}: agentladder {ours_rps:,.0f} req/s (p50 {ours_p50}, p99 {ours_p99})"
                      f" vs bare with its access log {logged_rps:,.0f} req/s: ratio {ratio:.2f};"
                      f" both without: {quiet_rps:,.0f} vs {bare_rps:,.0f} req/s (bare p50"
                      f" {bare_p50}, p99 {bare_p99}): ratio {quiet_ratio:.2f}"
                      f" ({verdict} target >= {target} like for like)")  # fmt: skip
                print(
                    f"  agentladder with its access log against the bare app without one:"
                    f" {ours_rps / bare_rps:.2f}"
                )
                print(
                    f"  server CPU a request: agentladder {ours_us:,.0f} µs, without the access"
                    f" log {quiet_us:,.0f} µs, bare with the log {logged_us:,.0f} µs, bare"
                    f" {bare_us:,.0f} µs"
                )
                print(
                    f"  of which the event loop's thread: {ours_loop:,.0f}, {quiet_loop:,.0f},"
                    f" {logged_loop:,.0f}, {bare_loop:,.0f} µs"
                )
        finally:
            for server in servers:
                server.send_signal(signal.SIGTERM)
                server.wait(timeout=30)
