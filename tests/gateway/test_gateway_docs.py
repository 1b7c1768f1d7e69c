"""docs/gateway.md: its three `openai` lines answer through a served gateway; its
configuration example is a valid configuration."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import yaml

from agentladder.config import parse_settings
from tests.gateway.conftest import CLIENT
from tests.served import Server
from tests.test_docs_client import python_blocks

DOC = Path(__file__).resolve().parent.parent.parent / "docs" / "gateway.md"


def test_the_three_lines_get_an_answer(shared_gateway: Server) -> None:
    """The block is three lines and, run against `agentladder serve` with the URL and the
    token of the test, prints the routed agent's answer (after the fallbacks)."""
    block = python_blocks(DOC)[0]
    assert len(block.strip().splitlines()) == 3
    assert "http://127.0.0.1:8000/v1" in block
    script = block.replace("http://127.0.0.1:8000", shared_gateway.base).replace(
        "client-token-0123456789", CLIENT
    )
    ran = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.strip() == "answer from alpha"


def test_the_configuration_examples_are_valid() -> None:
    """The configuration's YAML block parses with a client token, three aliases and a
    classifier; the classifier's own block parses with its agent (``sorter``) added."""
    blocks = re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    example = next(block for block in blocks if block.startswith("api:"))
    settings = parse_settings(yaml.safe_load(example))
    assert settings.api.tokens[0].role == "client"
    assert set(settings.gateway.models) == {"smart", "cheap", "near-best"}
    assert settings.gateway.classify is not None
    classify = next(block for block in blocks if "classify:" in block and block != example)
    sorter = {"name": "sorter", "backend": {"kind": "openai", "base_url": "http://x/v1"}}
    typed = parse_settings({**yaml.safe_load(classify), "agents": [sorter]})
    assert typed.gateway.classify is not None
    assert [rule.task_type for rule in typed.gateway.classify.rules] == ["code", "sql"]
    assert typed.gateway.classify.rules[1].matches("SELECT a FROM b")


def test_the_responses_example_gets_an_answer(shared_gateway: Server) -> None:
    """The Responses API's example (section "The Responses API"), run with OpenAI's client
    on the served gateway, prints an agent's answer."""
    [block] = [b for b in python_blocks(DOC) if "client.responses.create" in b]
    opening = (
        "import openai\n"
        f"client = openai.OpenAI(base_url={shared_gateway.url('/v1')!r}, api_key={CLIENT!r})\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", opening + block], capture_output=True, text=True, timeout=60,
        check=False,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.strip().startswith("answer from ")
