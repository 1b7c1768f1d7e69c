"""``agentladder serve`` refuses client tokens that would share one identity: a client
token without a name, two tokens with one name (each its own feedback judge and spend)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.served import free_port

NAMELESS = """
api:
  tokens:
    - {role: client, token: team-a-token-0123456789, name: team-a}
    - {role: client, token: team-b-token-0123456789}
"""
TWINS = """
api:
  tokens:
    - {role: client, token: team-a-token-0123456789, name: team-a}
    - {role: orchestrator, token: orchestrator-token-0123456789}
    - {role: client, token: team-b-token-0123456789, name: team-a}
"""


@pytest.mark.parametrize(
    ("config", "line"),
    [
        (NAMELESS, "invalid configuration: api.tokens[1].name: is required for role client"),
        (TWINS, "invalid configuration: api.tokens[2].name: duplicates api.tokens[0].name"),
    ],
)
def test_serve_refuses_tokens_sharing_an_identity(tmp_path: Path, config: str, line: str) -> None:
    """`serve` stops at start with one line naming the token's path and value (no
    traceback), and creates no database."""
    path = tmp_path / "agents.yaml"
    path.write_text(config, encoding="utf-8")
    db = tmp_path / "served.db"
    args = ["serve", "--config", str(path), "--db", str(db), "--port", str(free_port())]
    done = subprocess.run(
        [sys.executable, "-m", "agentladder.cli", *args], capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    said = (done.stdout + done.stderr).strip().splitlines()
    assert len(said) == 1, said
    assert said[0].startswith(line)
    assert not db.exists()
