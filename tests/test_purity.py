"""The rules stay pure: importing agentladder.domain loads no I/O or async machinery."""

from __future__ import annotations

import subprocess
import sys

FORBIDDEN = ("sqlite3", "asyncio", "nats", "fastapi", "starlette", "httpx", "uvicorn", "yaml")

SCRIPT = f"""
import importlib, pkgutil, sys
import agentladder.domain as domain
names = [m.name for m in pkgutil.iter_modules(domain.__path__)]
for name in names:
    importlib.import_module("agentladder.domain." + name)
print(len(names))
print(",".join(sorted(m for m in {FORBIDDEN!r} if m in sys.modules)))
"""


def test_importing_every_rule_module_loads_no_io_module() -> None:
    """In a fresh interpreter, all domain modules import without sqlite3/asyncio/nats/fastapi."""
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True
    )
    count, loaded = result.stdout.split("\n")[:2]
    assert int(count) >= 10
    assert loaded == ""
