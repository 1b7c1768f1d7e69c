"""What hostile upstream streams cost the gateway: `agentladder serve` (its own process,
SQLite) with one agent whose provider (``tests/gateway/provider.py``, ``streamline:``)
sends one piece, then one line without a newline, 1 KiB every 10 ms, without end.

Three such streams are asked at once and read for ``HOSTILE_S`` seconds (40 by default),
while ``/healthz`` is asked twice a second. Reported: the server's CPU seconds in that
time (``/proc/<pid>/stat``), its peak RSS and ``/healthz``'s p50 and worst time. Two runs
in the same process: the agent's default bounds (the line is cut at ``max_line_bytes``,
1 MiB, after about 10 s), and the line bound raised to 64 MiB (the stream relayed for the
whole time: what the event reader's own scanning costs). ``HOSTILE_SRC`` runs another
checkout's ``src`` instead, the first run only (the code before the bounds, for the
comparison in docs/benchmarks.md).

Run: ``.venv/bin/python -m benchmarks hostile_streams``.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from tests.gateway.provider import Providers
from tests.served import free_port

SECONDS = float(os.environ.get("HOSTILE_S", "40"))
STREAMS = 3


def _usage(pid: int) -> tuple[float, float]:
    """CPU seconds (every thread) and RSS in MB of ``pid``."""
    fields = Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    status = Path(f"/proc/{pid}/status").read_text()
    return cpu, int(status.split("VmRSS:")[1].split()[0]) / 1024


async def _run(folder: Path, base_url: str, extra: str, label: str) -> None:
    port = free_port()
    config = folder / f"{label}.yaml"
    config.write_text(
        f"""agents:
  - name: a
    backend: {{kind: openai, base_url: "{base_url}", model: "streamline:a",
               api_key_env: HOSTILE_KEY, timeout_s: 600{extra}}}
""",
        encoding="utf-8",
    )
    src = os.environ.get("HOSTILE_SRC")
    env = {**os.environ, "HOSTILE_KEY": "sk-hostile-0123456789"}
    if src:
        env["PYTHONPATH"] = src
    with (folder / f"{label}.log").open("w") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "agentladder.cli", "serve", "--config", str(config),
             "--db", str(folder / f"{label}.db"), "--port", str(port)],
            env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(base + "/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        cpu_before, rss_before = _usage(server.pid)
        peak = rss_before
        body = {"model": "a", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
        async with httpx.AsyncClient(timeout=None) as client:

            async def stream() -> None:
                async with client.stream("POST", base + "/v1/chat/completions", json=body) as r:
                    async for _ in r.aiter_bytes():
                        pass

            tasks = [asyncio.ensure_future(stream()) for _ in range(STREAMS)]
            health: list[float] = []
            end = time.monotonic() + SECONDS
            while time.monotonic() < end:
                started = time.perf_counter()
                await client.get(base + "/healthz")
                health.append((time.perf_counter() - started) * 1000)
                peak = max(peak, _usage(server.pid)[1])
                await asyncio.sleep(0.5)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        cpu_after, _ = _usage(server.pid)
    finally:
        server.terminate()
        server.wait(30)
    health.sort()
    print(
        f"{label}: {STREAMS} streams for {SECONDS:.0f} s: CPU {cpu_after - cpu_before:.1f} s;"
        f" RSS {rss_before:.0f} MB, peak {peak:.0f} MB; /healthz p50"
        f" {health[len(health) // 2]:.1f} ms, worst {health[-1]:.1f} ms ({len(health)} asked)"
    )


def main() -> None:
    """Both runs, the default bounds first."""
    folder = Path(tempfile.mkdtemp(prefix="hostile-"))
    providers = Providers(folder, free_port())
    try:
        asyncio.run(_run(folder, providers.base_url, "", "default bounds"))
        if not os.environ.get("HOSTILE_SRC"):  # older code knows no bounds to raise
            big = ", max_line_bytes: 67108864"
            asyncio.run(_run(folder, providers.base_url, big, "line bound 64 MiB"))
    finally:
        providers.stop()
