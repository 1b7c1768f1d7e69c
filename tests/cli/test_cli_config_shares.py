"""``agentladder config check`` refuses fair shares and rates that contradict each other."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentladder.cli import app
from agentladder.config import parse_settings
from agentladder.errors import InvalidInput

runner = CliRunner()
TOKEN = "shares-token-0123456789"


def _check(tmp_path: Path, text: str) -> tuple[int, list[str]]:
    path = tmp_path / "shares.yaml"
    path.write_text(text, encoding="utf-8")
    result = runner.invoke(app, ["config", "check", str(path)])
    return result.exit_code, result.stderr.splitlines()


def test_a_token_share_too_small_for_a_gateway_body_is_one_line(tmp_path: Path) -> None:
    """A token share under gateway.max_body_bytes is one error line naming key and value."""
    code, lines = _check(tmp_path, "api:\n  max_buffered_share_per_token: 0.25\n")
    assert code == 1
    assert lines == [
        "error: api.max_buffered_share_per_token: leaves one token 8388608 of"
        " api.max_buffered_bytes (33554432) bytes, under the largest body it may send"
        " (16777216): such a body could never be received (0.25)"
    ]


def test_every_contradiction_is_listed(tmp_path: Path) -> None:
    """Every contradiction of the file is its own line."""
    text = f"""
api:
  roles:
    client: {{max_buffered_share: 1.0}}
  tokens:
    - {{role: orchestrator, token: {TOKEN}, burst: 5}}
"""
    code, lines = _check(tmp_path, text)
    assert code == 1
    assert [line.split(":")[1].strip() for line in lines] == [
        "api.roles.client.max_buffered_share",
        "api.tokens[0].burst",
    ]
    assert lines[1] == "error: api.tokens[0].burst: needs a rate_per_s, on the token or its" \
        " role (orchestrator) (5)"  # fmt: skip


def test_bad_values_name_the_key(tmp_path: Path) -> None:
    """A share over 1, a rate of 0, an in-flight bound of 0: each named by its path."""
    text = f"""
api:
  max_buffered_share_per_token: 1.5
  roles:
    client: {{rate_per_s: 0}}
  tokens:
    - {{role: client, token: {TOKEN}, name: team-a, max_in_flight: 0}}
"""
    code, lines = _check(tmp_path, text)
    assert code == 1
    assert [line.split(":")[1].strip() for line in lines] == [
        "api.tokens[0].max_in_flight",
        "api.max_buffered_share_per_token",
        "api.roles.client.rate_per_s",
    ]


def test_serve_refuses_the_first_contradiction() -> None:
    """serve's parse_settings raises the first contradiction, naming its key."""
    with pytest.raises(InvalidInput) as refused:
        parse_settings({"api": {"roles": {"agent": {"max_buffered_share": 0.01}}}})
    assert refused.value.field == "api.roles.agent.max_buffered_share"
    assert refused.value.value == 0.01


def test_the_default_and_a_tuned_configuration_are_accepted(tmp_path: Path) -> None:
    """No settings, and tuned roles and tokens, are accepted."""
    assert _check(tmp_path, "{}\n") == (0, [])
    text = f"""
api:
  max_buffered_share_per_token: 0.6
  roles:
    client: {{max_in_flight: 8, rate_per_s: 2, burst: 4}}
    orchestrator: {{rate_per_s: 500}}
  tokens:
    - {{role: client, token: {TOKEN}, name: team-a, max_in_flight: 100, rate_per_s: 50}}
"""
    assert _check(tmp_path, text) == (0, [])
