"""The README's three lines send a judgment to a served instance; docs/client.md's
MockTransport example runs as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import httpx

from tests.served import start_server

ROOT = Path(__file__).resolve().parent.parent
CONFIG = """
agents:
  - name: atlas
    backend: {kind: simulated, quality: 8.0}
  - name: borealis
    backend: {kind: simulated, quality: 8.5}
"""


def python_blocks(path: Path) -> list[str]:
    """The ```python blocks of a Markdown file."""
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


def test_the_readme_sends_a_judgment(tmp_path: Path) -> None:
    """The README's block is three lines and, run against `agentladder serve` (no tokens,
    loopback), prints the award of the judgment it sent."""
    block = python_blocks(ROOT / "README.md")[0]
    assert len(block.strip().splitlines()) == 3
    assert "http://127.0.0.1:8000" in block
    server = start_server(tmp_path, CONFIG)
    try:
        script = block.replace("http://127.0.0.1:8000", server.base)
        ran = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
            check=False,
        )  # fmt: skip
        profile = server.url("/oracle/profiles/atlas")
        xp = httpx.get(profile, timeout=10).json()["xp"]
    finally:
        server.stop()
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert "agent_id='atlas'" in ran.stdout
    assert "contract_id='task-1'" in ran.stdout
    assert xp > 0


def test_the_mock_transport_example_runs() -> None:
    """docs/client.md's testing example passes as written."""
    blocks = [b for b in python_blocks(ROOT / "docs" / "client.md") if "MockTransport" in b]
    assert len(blocks) == 1
    exec(compile(blocks[0], "docs/client.md", "exec"), {})
