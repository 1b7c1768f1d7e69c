"""What a small request can make the server hold and send: the batch endpoint's answers
and the pages of an agent with many task types, against a real ``agentladder serve``.

Three ``POST /oracle/judgments/batch`` of 1,000 judgments each, every judgment of one agent
in a task type of its own (about 80 KB each, as issue 23 sent them), then the agent's
profile, its dashboard page and the dashboard's index. For each: the bytes answered
(read as they stream, never held) and the status; the server's peak and current resident
memory (VmHWM, VmRSS from ``/proc/<pid>/status``) after each step. Run with the default
bounds, and with ``oracle.max_task_types_per_agent`` raised to 5,000 (when the
configuration has the key) so the batch's answer is measured on its own.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from benchmarks.scale_serve import _free_port, _status_mb

__all__ = ["main", "run"]

BATCHES = 3
ITEMS = 1000
AGENT = "amp"


def _start(folder: Path, config: str) -> tuple[subprocess.Popen[bytes], str, Path]:
    path = folder / "amp.yaml"
    path.write_text(config, encoding="utf-8")
    port = _free_port()
    log = folder / f"serve-{port}.log"
    with log.open("w", encoding="utf-8") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "agentladder.cli", "serve", "--config", str(path),
             "--db", str(folder / "amp.db"), "--port", str(port)],
            stdout=out, stderr=subprocess.STDOUT, env=dict(os.environ),
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"serve did not start: {log.read_text()[-2000:]}")
        try:
            if httpx.get(base + "/readyz", timeout=1).status_code == 200:
                return process, base, log
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("serve did not answer within 60 s")


def _sized(client: httpx.Client, method: str, url: str, **kwargs: object) -> tuple[int, int, float]:
    """Status, bytes of the body and seconds, the body read as it streams."""
    began = time.perf_counter()
    size = 0
    with client.stream(method, url, **kwargs) as answer:  # type: ignore[arg-type]
        for chunk in answer.iter_raw():
            size += len(chunk)
        status = answer.status_code
    return status, size, time.perf_counter() - began


def _batch(number: int) -> dict[str, object]:
    return {
        "judgments": [
            {"agent_id": AGENT, "contract_id": f"c{number}-{i}", "task_type": f"t{number}-{i}",
             "score": 7.5}
            for i in range(ITEMS)
        ]
    }  # fmt: skip


def run(config: str) -> list[str]:
    """The figures of one server, one line per step."""
    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix="amp-") as folder:
        process, base, _ = _start(Path(folder), config)
        pid = process.pid
        try:
            with httpx.Client(base_url=base, timeout=600) as client:
                lines.append(f"  start: RSS {_status_mb(pid, 'VmRSS'):.0f} MB")
                for number in range(BATCHES):
                    body = _batch(number)
                    sent = len(httpx.Request("POST", base, json=body).content)
                    status, size, seconds = _sized(client, "POST", "/oracle/judgments/batch",
                                                   json=body)  # fmt: skip
                    lines.append(
                        f"  batch {number + 1}: {sent / 1e3:.0f} KB sent, answered {status}"
                        f" with {size / 1e6:.2f} MB in {seconds:.1f} s; peak RSS"
                        f" {_status_mb(pid, 'VmHWM'):.0f} MB, RSS {_status_mb(pid, 'VmRSS'):.0f} MB"
                    )
                for path in (f"/oracle/profiles/{AGENT}", f"/dashboard/agents/{AGENT}",
                             "/dashboard"):  # fmt: skip
                    status, size, seconds = _sized(client, "GET", path)
                    lines.append(
                        f"  GET {path}: {status}, {size / 1e6:.2f} MB in {seconds:.2f} s; peak"
                        f" RSS {_status_mb(pid, 'VmHWM'):.0f} MB, RSS"
                        f" {_status_mb(pid, 'VmRSS'):.0f} MB"
                    )
        finally:
            os.kill(pid, signal.SIGTERM)
            process.wait(timeout=60)
    return lines


def main() -> None:
    """Default bounds, then the per-agent bound raised (when the configuration has it)."""
    print("default configuration:")
    print("\n".join(run("")))
    raised = "oracle:\n  max_task_types_per_agent: 5000\n"
    print("oracle.max_task_types_per_agent: 5000:")
    try:
        print("\n".join(run(raised)))
    except RuntimeError as error:  # a configuration without the key: serve refuses it
        print(f"  not run: {str(error).splitlines()[-1][:200]}")


if __name__ == "__main__":
    main()
