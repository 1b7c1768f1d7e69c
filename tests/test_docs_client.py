"""The README's four lines send a judgment to a served instance, at a task type of the
demo, and print one short line; docs/client.md's MockTransport example runs as written;
the token each call needs, in docs/client.md and the README, is the role its route
declares."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import httpx

from agentladder.api.app import ROUTE_MODULES
from agentladder.api.auth import needs
from agentladder.api.route_roles import RouteRoles
from agentladder.demo import TASK_TYPES
from tests.served import start_server

ROOT = Path(__file__).resolve().parent.parent
CONFIG = """
agents:
  - name: atlas
    capability_tags: [audit, code_review]
    backend: {kind: simulated, quality: 8.0}
  - name: borealis
    backend: {kind: simulated, quality: 8.5}
"""


def python_blocks(path: Path) -> list[str]:
    """The ```python blocks of a Markdown file."""
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


def test_the_readme_sends_a_judgment(tmp_path: Path) -> None:
    """The README's block is four lines and, run against `agentladder serve` (no tokens,
    loopback), judges atlas at a task type the demo has (none added to it) and prints the
    award in one short line, not the whole result's repr."""
    block = python_blocks(ROOT / "README.md")[0]
    assert len(block.strip().splitlines()) == 4
    assert "http://127.0.0.1:8000" in block
    task_type = re.search(r'task_type="([a-z_]+)"', block)
    assert task_type is not None
    assert task_type.group(1) in TASK_TYPES
    server = start_server(tmp_path, CONFIG)
    try:
        script = block.replace("http://127.0.0.1:8000", server.base)
        ran = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
            check=False,
        )  # fmt: skip
        profile = httpx.get(server.url("/oracle/profiles/atlas"), timeout=10).json()
    finally:
        server.stop()
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert profile["xp"] > 0
    level = profile["level"]
    assert re.fullmatch(rf"atlas: \+\d+ XP, now {profile['xp']} XP \({level}\)\n", ran.stdout)


def test_the_mock_transport_example_runs() -> None:
    """docs/client.md's testing example passes as written."""
    blocks = [b for b in python_blocks(ROOT / "docs" / "client.md") if "MockTransport" in b]
    assert len(blocks) == 1
    exec(compile(blocks[0], "docs/client.md", "exec"), {})


def declared(call: str) -> str:
    """The role the route of ``call`` (``POST /route``) declares, as the docs say it:
    ``orchestrator or admin``, or ``none``."""
    method, _, path = call.partition(" ")
    scope = {"type": "http", "method": method, "path": re.sub(r"\{\w+\}", "x", path),
             "root_path": "", "headers": []}  # fmt: skip
    roles, _ = RouteRoles(module.router for module in ROUTE_MODULES).of(scope)
    return "none" if roles is None else needs(roles)


def test_the_token_each_call_needs_is_the_role_its_route_declares() -> None:
    """Each row of docs/client.md's methods table: its token column is the role its API
    route declares (``both``: those of should_validate and record_validation); the
    README's sentence names the judgment's."""
    text = (ROOT / "docs" / "client.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)\(.*?\)` \| (.+?) \| (.+?) \| .+\|$", text, re.M)
    by_name = {name: (api, token) for name, api, token in rows}
    assert len(by_name) == 16
    for name, (api, token) in by_name.items():
        if api == "both":
            calls = [by_name["should_validate"][0], by_name["record_validation"][0]]
        else:
            calls = [api]
        for call in calls:
            expected = declared(call.strip("`"))
            assert token == expected or token.startswith(f"{expected};"), (name, token, expected)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"a judgment needs a token of role {declared('POST /oracle/judgments')}" in readme
