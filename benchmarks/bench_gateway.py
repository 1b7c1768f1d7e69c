"""The gateway's added latency: streams through ``agentladder serve`` against the same
local provider called directly, and through a bare httpx reverse proxy, in the same run.

A local OpenAI-compatible provider (``tests/gateway/provider.py``, its own process:
uvicorn, a stream of five events about 30 ms long) and ``agentladder serve`` (its own
process, SQLite) with one agent on that provider. The bare proxy
(``bare_proxy.py``, its own uvicorn process) relays the same requests with nothing else.
The client (this process, httpx) keeps 50 streams in flight, and alternates rounds: one
round of requests straight to the provider, one through the bare proxy, one through the
gateway (``model: route:bench``, so that routing runs), so that all meet the same load on
the machine. Each request's time is from sending it to
its last byte. The added latency is a path's percentile minus the direct one's (p50 and
p99); the throughput, streams answered per second of its rounds. Targets (issue 28): at
most 2 ms added at p50 and 5 ms at p99; the gateway's throughput at least 0.7 of the
bare proxy's.

Beside the wall times, the CPU each server process spent per stream in its rounds
(``/proc/<pid>/stat``, every thread): unlike a latency, which queues behind whatever else
the machine runs, a process's CPU per stream barely moves with the load, so it says what
the gateway itself costs against the bare proxy.

Then resident memory: ``GATEWAY_MEMORY_REQUESTS`` streams (100,000 by default) through
the gateway, ``CONCURRENCY`` in flight, its RSS (``VmRSS``) sampled every 10,000. Flat
means no growth beyond noise after the warm-up (the first block).

The client token has a name and a budget (never reached), so the budget's hold and
settle are on the measured path; ``GATEWAY_BUDGET=off`` measures a client without one.

``GATEWAY_CHECKS=on`` adds a judge (the local provider's ``judge:2``, under the pass
score): the agent's checks fail and keep it on probation, so every answer is checked and
each gateway stream also stores its check before its end goes, the judge's work (its
calls, judgments, verdicts) sharing the gateway's process: the checks' cost on the
request path at its worst.

Phase ``checkwrite`` (not in the default): what a checked answer waits for on the request
path, the store write of its check (``put_check`` on SQLite, ``synchronous=full``, in a
temporary folder): ``GATEWAY_REQUESTS`` writes one at a time, then as many with
``CONCURRENCY`` at once (the writer's group commit), each one's time.

Run: ``.venv/bin/python -m benchmarks gateway`` (``GATEWAY_REQUESTS``: requests per path,
2,000 by default; ``GATEWAY_CONCURRENCY``: streams in flight, 50 by default;
``GATEWAY_PHASES``: ``latency``, ``memory``, ``checkwrite``, comma-separated; the first
two by default).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from benchmarks.common import percentile
from tests.gateway.provider import Providers
from tests.served import free_port, start_server

CONCURRENCY = int(os.environ.get("GATEWAY_CONCURRENCY", "50"))
ROUNDS = 10
MEMORY_BLOCK = 10_000
_TICK = os.sysconf("SC_CLK_TCK")
TOKEN = "bench-client-token-0123456789"
BODY = {"messages": [{"role": "user", "content": "Which controls matter most?"}], "stream": True}


def _config(base_url: str) -> str:
    judge = (
        f"""gateway:
  judge:
    backend: {{kind: openai, base_url: "{base_url}", model: "judge:2"}}
    queue_size: 100000
"""
        if os.environ.get("GATEWAY_CHECKS") == "on"
        else ""
    )
    budget = (
        "" if os.environ.get("GATEWAY_BUDGET") == "off"
        else " budget: {limit_usd: 1000000, period: day},"
    )  # fmt: skip
    return f"""{judge}
api:
  tokens:
    - {{role: client, token: {TOKEN}, name: bench,{budget}
       max_in_flight: 100000, rate_per_s: 1000000, burst: 1000000}}
routing: {{projection_refresh_s: 60}}
agents:
  - name: fast
    input_price_per_mtok: 1.0
    output_price_per_mtok: 2.0
    backend: {{kind: openai, base_url: "{base_url}", model: "good:fast"}}
"""


async def _round(
    client: httpx.AsyncClient, url: str, model: str, count: int,
    refused: list[str] | None = None,
) -> list[float]:  # fmt: skip
    """``count`` streamed requests, ``CONCURRENCY`` in flight; each one's seconds. An
    answer that is not 200 is an error, or, with ``refused``, noted there (its status and
    body)."""
    times: list[float] = []
    todo = iter(range(count))
    headers = {"Authorization": f"Bearer {TOKEN}"}

    async def worker() -> None:
        for _ in todo:
            start = time.perf_counter()
            try:
                async with client.stream("POST", url, json={**BODY, "model": model},
                                         headers=headers) as response:  # fmt: skip
                    body = b""
                    async for chunk in response.aiter_bytes():
                        body = body or chunk
            except httpx.TransportError as error:
                if refused is None:
                    raise
                refused.append(f"{type(error).__name__}: {error}")
                continue
            if response.status_code != 200:
                if refused is None:
                    raise AssertionError(f"{url} answered {response.status_code}: {body!r}")
                refused.append(f"{response.status_code}: {body[:300]!r}")
            times.append(time.perf_counter() - start)

    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return times


def _limits() -> httpx.Limits:
    """The client's pool: a connection idle for 2 s is not reused (the servers, uvicorn,
    close theirs after 5 s: a request sent on one as it closes would fail)."""
    return httpx.Limits(
        max_connections=CONCURRENCY * 2, max_keepalive_connections=CONCURRENCY,
        keepalive_expiry=2.0,
    )  # fmt: skip


def _cpu_s(pid: int | None) -> float:
    """CPU seconds (user and system, every thread) process ``pid`` has used; 0 for None."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def _rss_mb(pid: int) -> float:
    """Resident memory of process ``pid``, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for {pid}")


async def _measure(
    paths: dict[str, tuple[str, str]], requests: int, pids: dict[str, int | None]
) -> None:
    """Alternating rounds on every path (name: URL and model); the figures. ``pids``: the
    server process of each path (None: direct), whose CPU per stream is measured."""
    limits = _limits()
    per_round = max(CONCURRENCY, requests // ROUNDS)
    times: dict[str, list[float]] = {name: [] for name in paths}
    spent: dict[str, float] = dict.fromkeys(paths, 0.0)
    cpu: dict[str, float] = dict.fromkeys(paths, 0.0)
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:
        for url, model in paths.values():  # warm every path
            await _round(client, url, model, CONCURRENCY)
        for _ in range(ROUNDS):
            for name, (url, model) in paths.items():
                started, used = time.perf_counter(), _cpu_s(pids[name])
                times[name] += await _round(client, url, model, per_round)
                spent[name] += time.perf_counter() - started
                cpu[name] += _cpu_s(pids[name]) - used
    for name, found in times.items():
        print(
            f"{name}: {len(found)} streams, p50 {percentile(found, 50) * 1000:.2f} ms,"
            f" p99 {percentile(found, 99) * 1000:.2f} ms, {len(found) / spent[name]:.0f}/s"
        )
    direct = times["direct"]
    for name in ("bare proxy", "gateway"):
        for q, target in ((50, 2.0), (99, 5.0)):
            added = (percentile(times[name], q) - percentile(direct, q)) * 1000
            verdict = "meets" if added <= target else "MISSES"
            print(f"{name} added latency p{q}: {added:.2f} ms ({verdict} target <= {target} ms)")
    per = {name: cpu[name] / len(times[name]) * 1000 for name in ("bare proxy", "gateway")}
    print(
        f"CPU per stream: bare proxy {per['bare proxy']:.2f} ms, gateway {per['gateway']:.2f} ms"
        f" (the gateway's own: +{per['gateway'] - per['bare proxy']:.2f} ms)"
    )
    ratio = (len(times["gateway"]) / spent["gateway"]) / (
        len(times["bare proxy"]) / spent["bare proxy"]
    )
    verdict = "meets" if ratio >= 0.7 else "MISSES"
    print(f"gateway throughput / bare proxy's: {ratio:.2f} ({verdict} target >= 0.7)")
    print(f"{CONCURRENCY} streams in flight, {per_round} per round, {ROUNDS} rounds per path")


def _own_time(metrics_url: str) -> None:
    """The gateway's own time per request as it counts it (``/metrics``: the route to
    the first bytes, less the provider's time), bucket by bucket."""
    prefix = 'agentladder_gateway_added_latency_seconds_bucket{agent="fast",le="'
    lines = httpx.get(metrics_url, timeout=30).text.splitlines()
    buckets = [
        (line[len(prefix) :].split('"')[0], float(line.split()[-1]))
        for line in lines
        if line.startswith(prefix)
    ]
    total = buckets[-1][1] if buckets else 0.0
    shares = ", ".join(f"<= {le}: {n / total:.0%}" for le, n in buckets if total)
    print(f"gateway's own time per request (its /metrics, {total:.0f} requests): {shares}")
    checks = "agentladder_gateway_checks_total{"
    outcomes = [line.split("outcome=")[1] for line in lines if line.startswith(checks)]
    if outcomes:
        print("checks: " + ", ".join(o.split('"')[1] + " " + o.split()[-1] for o in outcomes))


async def _memory(url: str, pid: int, requests: int) -> None:
    """``requests`` streams through the gateway; its RSS every ``MEMORY_BLOCK``."""
    limits = _limits()
    samples = [_rss_mb(pid)]
    refused: list[str] = []
    print(f"memory: RSS {samples[0]:.1f} MB before, then every {MEMORY_BLOCK:,} streams:")
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:
        done = 0
        while done < requests:
            block = min(MEMORY_BLOCK, requests - done)
            started = time.perf_counter()
            await _round(client, url, "route:bench", block, refused)
            done += block
            samples.append(_rss_mb(pid))
            rate = block / (time.perf_counter() - started)
            print(
                f"  {done:>7,}: RSS {samples[-1]:.1f} MB ({rate:.0f} streams/s,"
                f" {len(refused)} not answered so far)", flush=True,
            )  # fmt: skip
    settled = samples[1:]
    growth = settled[-1] - settled[0]
    print(
        f"memory: after the first block {settled[0]:.1f} MB, at the end {settled[-1]:.1f} MB"
        f" ({growth:+.1f} MB over {requests - MEMORY_BLOCK:,} streams), range"
        f" {min(settled):.1f}-{max(settled):.1f} MB"
    )
    if refused:
        print(f"memory: {len(refused)} streams not answered, the first: {refused[0]}")


async def _check_writes(folder: Path, count: int) -> None:
    """``count`` check writes one at a time, then ``count`` with ``CONCURRENCY`` at once."""
    # imported here: the code before this change, measured by the other phases, has none
    from agentladder.store.checks import PendingCheck
    from agentladder.store.sqlite.store import SqliteStore

    store = SqliteStore(folder / "checks.db")
    text = "Which controls matter most? " * 40  # about a kilobyte, as a short chat's

    def check(i: int) -> PendingCheck:
        return PendingCheck(
            contract_id=f"gw-{i:032x}", agent_id="fast", task_type="bench",
            conversation=text, answer=text, at=time.time(), owner="bench",
        )  # fmt: skip

    async def timed(i: int) -> float:
        started = time.perf_counter()
        await store.put_check(check(i), 0)
        return time.perf_counter() - started

    try:
        alone = [await timed(i) for i in range(count)]
        todo = iter(range(count, 2 * count))

        async def worker() -> list[float]:
            return [await timed(i) for i in todo]

        together = [t for ts in await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
                    for t in ts]  # fmt: skip
    finally:
        await store.close()
    for name, found in (("one at a time", alone), (f"{CONCURRENCY} at once", together)):
        print(
            f"check write (SQLite, synchronous=full), {name}: {len(found)} writes, p50"
            f" {percentile(found, 50) * 1000:.2f} ms, p99 {percentile(found, 99) * 1000:.2f} ms"
        )


def _bare(upstream: str, port: int, log: Path) -> subprocess.Popen[bytes]:
    """The bare proxy in its own uvicorn process, once it listens."""
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "benchmarks.bare_proxy:app", "--port", str(port),
             "--log-level", "warning"],
            stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "BARE_UPSTREAM": upstream},
        )  # fmt: skip
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
            return process
        except httpx.HTTPError:
            time.sleep(0.05)
    process.kill()
    raise AssertionError(f"the bare proxy did not start: {log.read_text()[-2000:]}")


def main() -> None:
    """Start the provider, the bare proxy and the gateway, measure, stop them by pid."""
    requests = int(os.environ.get("GATEWAY_REQUESTS", "2000"))
    phases = set(os.environ.get("GATEWAY_PHASES", "latency,memory").split(","))
    memory = int(os.environ.get("GATEWAY_MEMORY_REQUESTS", "100000"))
    with tempfile.TemporaryDirectory() as folder:
        where = Path(folder)
        if "checkwrite" in phases:
            asyncio.run(_check_writes(where, requests))
            if not phases & {"latency", "memory"}:
                return
        provider = Providers(where, free_port())
        upstream = provider.base_url + "/chat/completions"
        port = free_port()
        bare = _bare(upstream, port, where / "bare.log")
        try:
            server = start_server(where, _config(provider.base_url))
            try:
                paths = {
                    "direct": (upstream, "good:fast"),
                    "bare proxy": (f"http://127.0.0.1:{port}/v1/chat/completions", "good:fast"),
                    "gateway": (server.url("/v1/chat/completions"), "route:bench"),
                }
                pids = {"direct": None, "bare proxy": bare.pid, "gateway": server.process.pid}
                if "latency" in phases:
                    asyncio.run(_measure(paths, requests, pids))
                    _own_time(server.url("/metrics"))
                if "memory" in phases:
                    asyncio.run(_memory(paths["gateway"][0], server.process.pid, memory))
            finally:
                server.stop()
        finally:
            os.kill(bare.pid, signal.SIGTERM)
            bare.wait(timeout=20)
            provider.stop()


if __name__ == "__main__":
    main()
