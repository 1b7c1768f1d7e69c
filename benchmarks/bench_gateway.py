"""The gateway's added latency: streams through ``agentladder serve`` against the same
local provider called directly, in the same run.

A local OpenAI-compatible provider (``tests/gateway/provider.py``, its own process:
uvicorn, a stream of five events about 30 ms long) and ``agentladder serve`` (its own
process, SQLite) with one agent on that provider. The client (this process, httpx) keeps
50 streams in flight, and alternates rounds: one round of requests straight to the
provider, one through the gateway (``model: route:bench``, so that routing runs), so
that both meet the same load on the machine. Each request's time is from sending it to
its last byte. The added latency is the gateway's percentile minus the direct one's
(p50 and p99). Targets (issue 28): at most 2 ms at p50 and 5 ms at p99.

Run: ``.venv/bin/python -m benchmarks gateway`` (``GATEWAY_REQUESTS``: requests per path,
2,000 by default; ``GATEWAY_CONCURRENCY``: streams in flight, 50 by default).
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path

import httpx

from benchmarks.common import percentile
from tests.gateway.provider import Providers
from tests.served import Server, free_port, start_server

CONCURRENCY = int(os.environ.get("GATEWAY_CONCURRENCY", "50"))
ROUNDS = 10
TOKEN = "bench-client-token-0123456789"
BODY = {"messages": [{"role": "user", "content": "Which controls matter most?"}], "stream": True}


def _config(base_url: str) -> str:
    return f"""
api:
  tokens: [{{role: client, token: {TOKEN}}}]
routing: {{projection_refresh_s: 60}}
agents:
  - name: fast
    input_price_per_mtok: 1.0
    output_price_per_mtok: 2.0
    backend: {{kind: openai, base_url: "{base_url}", model: "good:fast"}}
"""


async def _round(client: httpx.AsyncClient, url: str, model: str, count: int) -> list[float]:
    """``count`` streamed requests, ``CONCURRENCY`` in flight; each one's seconds."""
    times: list[float] = []
    todo = iter(range(count))
    headers = {"Authorization": f"Bearer {TOKEN}"}

    async def worker() -> None:
        for _ in todo:
            start = time.perf_counter()
            async with client.stream("POST", url, json={**BODY, "model": model},
                                     headers=headers) as response:  # fmt: skip
                async for _chunk in response.aiter_bytes():
                    pass
                if response.status_code != 200:
                    raise AssertionError(f"{url} answered {response.status_code}")
            times.append(time.perf_counter() - start)

    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return times


async def _measure(provider: Providers, server: Server, requests: int) -> None:
    limits = httpx.Limits(max_connections=CONCURRENCY * 2, max_keepalive_connections=CONCURRENCY)
    per_round = max(CONCURRENCY, requests // ROUNDS)
    direct: list[float] = []
    gateway: list[float] = []
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:
        direct_url = provider.base_url + "/chat/completions"
        gateway_url = server.url("/v1/chat/completions")
        await _round(client, direct_url, "good:fast", CONCURRENCY)  # warm both paths
        await _round(client, gateway_url, "route:bench", CONCURRENCY)
        started = time.perf_counter()
        for _ in range(ROUNDS):
            direct += await _round(client, direct_url, "good:fast", per_round)
            gateway += await _round(client, gateway_url, "route:bench", per_round)
        took = time.perf_counter() - started
    for name, found in (("direct", direct), ("gateway", gateway)):
        print(
            f"{name}: {len(found)} streams, p50 {percentile(found, 50) * 1000:.2f} ms,"
            f" p99 {percentile(found, 99) * 1000:.2f} ms"
        )
    for q, target in ((50, 2.0), (99, 5.0)):
        added = (percentile(gateway, q) - percentile(direct, q)) * 1000
        verdict = "meets" if added <= target else "MISSES"
        print(f"added latency p{q}: {added:.2f} ms ({verdict} target <= {target} ms)")
    print(f"{len(direct) + len(gateway)} streams at {CONCURRENCY} in flight in {took:.1f} s")


def main() -> None:
    """Start the provider and the gateway, measure, stop both."""
    requests = int(os.environ.get("GATEWAY_REQUESTS", "2000"))
    with tempfile.TemporaryDirectory() as folder:
        where = Path(folder)
        provider = Providers(where, free_port())
        try:
            server = start_server(where, _config(provider.base_url))
            try:
                asyncio.run(_measure(provider, server, requests))
            finally:
                server.stop()
        finally:
            provider.stop()


if __name__ == "__main__":
    main()
