"""Services over a store for a test body, outside the API; `agentladder` run as a
process of its own with its peak memory measured."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from agentladder.config import parse_settings
from agentladder.services.container import Services, build_services

T = TypeVar("T")


def run_with_services(
    store: str, body: Callable[[Services], Coroutine[Any, Any, T]], config: Any = None
) -> T:
    """Build the services of ``config`` on ``store``, run ``body``, close them."""

    async def main() -> T:
        services = await build_services(parse_settings(config), store_url=store)
        try:
            return await body(services)
        finally:
            await services.close()

    return asyncio.run(main())


_LAUNCH = """
import os, signal, subprocess, sys, time
started = time.monotonic()
child = subprocess.Popen(sys.argv[3:])
deadline = started + float(sys.argv[2])
fds = 0
while True:
    found, status, usage = os.wait4(child.pid, os.WNOHANG)
    if found:
        break
    try:
        fds = max(fds, len(os.listdir(f"/proc/{child.pid}/fd")))
    except OSError:
        pass
    if time.monotonic() > deadline:
        os.kill(child.pid, signal.SIGKILL)
        found, status, usage = os.wait4(child.pid, 0)
        break
    time.sleep(0.01)
seconds = time.monotonic() - started
with open(sys.argv[1], "w") as out:
    out.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss} {fds} {seconds}")
"""


@dataclass(frozen=True)
class Measured:
    """A finished process: its exit code, output, peak resident memory (MB), the most
    descriptors it was seen holding (sampled every 10 ms) and its wall time."""

    code: int
    out: str
    err: str
    peak_mb: float
    fds: int
    seconds: float


def run_measured(
    args: list[str], timeout: float = 300, env: dict[str, str] | None = None
) -> Measured:
    """`agentladder ARGS` as a process of its own, measured from outside: ``wait4``'s
    ``ru_maxrss`` of that process alone, started by a small launcher (a child forked from
    this large test process would count this process's memory until its exec)."""
    with tempfile.TemporaryDirectory() as folder:
        result = Path(folder) / "result"
        out, err = Path(folder) / "out", Path(folder) / "err"
        command = [sys.executable, "-c", "from agentladder.cli import main; main()", *args]
        with out.open("wb") as stdout, err.open("wb") as stderr:
            subprocess.run(
                [sys.executable, "-c", _LAUNCH, str(result), str(timeout), *command],
                stdout=stdout, stderr=stderr, check=True, timeout=timeout + 60, env=env,
            )  # fmt: skip
        code, peak_kib, fds, seconds = result.read_text().split()
        return Measured(int(code), out.read_text(), err.read_text(), int(peak_kib) / 1024,
                        int(fds), float(seconds))  # fmt: skip
