"""The resident memory of a real ``agentladder serve`` on the scale benchmark's data.

The server runs as its own process on loopback (as ``tests/served.py`` starts it), serves
leaderboards, judgments and the directory, and its VmRSS and VmHWM are read from
``/proc/<pid>/status`` along the way. It is stopped by its pid.
"""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx

__all__ = ["Memory", "served_memory"]

Memory = dict[str, float]  # label -> megabytes
CALLS = 300


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _status_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024  # kB
    raise LookupError(field)


def served_memory(store_url: str, agents: list[str], folder: Path) -> Memory:
    """Start ``agentladder serve --store store_url``, use it, read its memory, stop it."""
    port = _free_port()
    log = folder / f"serve-{port}.log"
    with log.open("w", encoding="utf-8") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "agentladder.cli", "serve", "--store", store_url,
             "--port", str(port)],
            stdout=out, stderr=subprocess.STDOUT, env=dict(os.environ),
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    rng = random.Random(99)
    memory: Memory = {}
    try:
        began = time.monotonic()
        while True:
            if process.poll() is not None or time.monotonic() - began > 300:
                raise RuntimeError(f"the server did not start: {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{base}/readyz", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        memory[f"ready ({time.monotonic() - began:.1f} s to start)"] = _status_mb(
            process.pid, "VmRSS"
        )
        with httpx.Client(base_url=base, timeout=300) as client:
            for _i in range(CALLS):
                board = client.get("/oracle/leaderboard", params={"limit": 100})
                assert board.status_code == 200, board.text
                body = {
                    "agent_id": rng.choice(agents), "contract_id": f"bench-{uuid.uuid4().hex}",
                    "task_type": "sql", "score": 8.0, "cost": 0.01, "budget": 0.05,
                }  # fmt: skip
                judged = client.post("/oracle/judgments", json=body)
                assert judged.status_code == 200, judged.text
            memory[f"after {CALLS} leaderboards and {CALLS} judgments"] = _status_mb(
                process.pid, "VmRSS"
            )
            directory = client.get("/agents/directory", params={"tag": "sql"})
            assert directory.status_code == 200, directory.text
            memory["after GET /agents/directory?tag=sql"] = _status_mb(process.pid, "VmRSS")
        memory["peak (VmHWM)"] = _status_mb(process.pid, "VmHWM")
    finally:
        os.kill(process.pid, signal.SIGTERM)
        process.wait(timeout=60)
        log.unlink(missing_ok=True)
    return memory
