"""``config check --probe`` covers the gateway's judge: a judge with its own backend is
probed as an agent is (ok with the time, or what failed); a judge or classifier that is an
agent of the config is probed once, as that agent, its line naming the role."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentladder.cli import app
from agentladder.config import parse_settings
from agentladder.providers.preflight import probe_agents
from tests.providers.chat_server import ChatServer, Reply

runner = CliRunner()


def _config(url: str, judge: str) -> str:
    return f"""
agents:
  - name: worker
    backend: {{kind: openai, base_url: "{url}", model: w}}
  - name: sim
    backend: {{kind: simulated}}
gateway:
  judge: {judge}
"""


def test_a_judge_with_its_own_backend_is_probed(chat_server: ChatServer, tmp_path: Path) -> None:
    """One probe line for the agent, one for ``gateway.judge (grader)``, each a request to
    the server (the judge's asks its own model); the judge failing fails the check."""
    path = tmp_path / "c.yaml"
    judge = f'{{name: grader, backend: {{kind: openai, base_url: "{chat_server.url}", model: j}}}}'
    path.write_text(_config(chat_server.url, judge), encoding="utf-8")
    result = runner.invoke(app, ["config", "check", str(path), "--probe"])
    assert result.exit_code == 0, result.output
    assert "probing 2 agents and gateway.judge (one tiny request each):" in result.stdout
    assert "gateway.judge (grader): ok: " in result.stdout
    assert sorted(s.body["model"] for s in chat_server.seen) == ["j", "w"]
    chat_server.replies.extend([Reply('{"error": {"message": "no"}}', status=401)] * 2)
    failed = runner.invoke(app, ["config", "check", str(path), "--probe"])
    assert failed.exit_code == 1
    assert "gateway.judge (grader): FAILED: " in failed.stdout
    assert "2 of 3 agents failed the probe: worker, gateway.judge (grader)" in failed.stdout


def test_a_judge_backend_without_its_key_fails_without_a_request(
    chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judge's ``api_key_env`` unset: its probe fails naming the variable."""
    monkeypatch.delenv("JUDGE_KEY_UNSET", raising=False)
    settings = parse_settings({
        "gateway": {"judge": {"backend": {"kind": "openai", "base_url": chat_server.url,
                                          "model": "j", "api_key_env": "JUDGE_KEY_UNSET"}}},
    })  # fmt: skip
    [probe] = asyncio.run(probe_agents(settings, {}))
    assert probe.agent == "gateway.judge (j)"
    assert not probe.ok
    assert probe.detail == "its API key variable JUDGE_KEY_UNSET is not set"
    assert chat_server.seen == []


def test_a_judge_and_classifier_that_are_agents_are_probed_once_with_their_role(
    chat_server: ChatServer,
) -> None:
    """``gateway.judge.agent`` and ``gateway.classify.agent`` naming the fleet's agent: one
    request, its line saying it is also the judge and the classifier."""
    settings = parse_settings({
        "agents": [{"name": "worker", "backend": {"kind": "openai", "base_url": chat_server.url,
                                                  "model": "w"}}],
        "gateway": {"judge": {"agent": "worker"},
                    "classify": {"agent": "worker", "task_types": ["audit"]}},
    })  # fmt: skip
    [probe] = asyncio.run(probe_agents(settings, {}))
    assert probe.ok
    assert probe.detail.endswith("(also gateway.judge and gateway.classify.agent)")
    assert len(chat_server.seen) == 1
