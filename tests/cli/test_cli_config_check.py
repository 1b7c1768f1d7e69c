"""``agentladder config check`` lists every error of the file, one line each."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from agentladder.cli import app

runner = CliRunner()
BAD = """
store: postgres://x
orchestrator:
  timeout_s: -1
agents:
  - name: a1
    input_price_per_mtok: -3
    capabilty_tags: [audit]
  - name: a1
  - name: "bad name!"
  - name: fine
"""


def test_every_error_of_the_file_is_one_line(tmp_path: Path) -> None:
    """Six errors in four sections and three agents: six lines on stderr, each naming its
    path and value, in the file's order of agents first; nothing on stdout; exit 1."""
    path = tmp_path / "bad.yaml"
    path.write_text(BAD, encoding="utf-8")
    result = runner.invoke(app, ["config", "check", str(path)])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "error: agents[a1].input_price_per_mtok: Input should be greater than or equal to 0 (-3)",
        "error: agents[a1].capabilty_tags: unknown key (did you mean capability_tags?) (['audit'])",
        "error: agents[1].name: duplicates agents[0].name ('a1')",
        "error: agents[2].name: must be 1 to 64 characters from A-Z a-z 0-9 _ . - ('bad name!')",
        "error: store: must start with memory://, sqlite:/// or nats:// ('postgres://x')",
        "error: orchestrator.timeout_s: Input should be greater than 0 (-1)",
    ]


def test_a_file_with_one_error_is_one_line_as_serve_tells_it(tmp_path: Path) -> None:
    """One error: the one line load_settings (serve) gives for it."""
    path = tmp_path / "one.yaml"
    path.write_text("orchestrator:\n  timeout_s: -1\n", encoding="utf-8")
    result = runner.invoke(app, ["config", "check", str(path)])
    assert result.exit_code == 1
    assert result.stderr == "error: orchestrator.timeout_s: Input should be greater than 0 (-1)\n"


TOKENS = """
api:
  tokens:
    - {role: client, token: client-token-0123456789, name: team-a}
    - {role: client, token: client-token-9876543210}
agents:
  - name: a1
    input_price_per_mtok: -3
"""


def test_a_client_token_without_a_name_is_listed(tmp_path: Path) -> None:
    """``config check`` names a nameless client token's ``api.tokens[i].name`` beside the
    file's other errors."""
    path = tmp_path / "tokens.yaml"
    path.write_text(TOKENS, encoding="utf-8")
    result = runner.invoke(app, ["config", "check", str(path)])
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines[0] == (
        "error: agents[a1].input_price_per_mtok: Input should be greater than or equal to 0 (-3)"
    )
    assert lines[1].startswith("error: api.tokens[1].name: is required for role client")
    assert lines[1].endswith("(None)")
    assert len(lines) == 2


def test_two_tokens_with_one_name_are_one_line(tmp_path: Path) -> None:
    """``config check`` on two tokens named alike: one line naming the second's path."""
    path = tmp_path / "twice.yaml"
    path.write_text(
        "api:\n  tokens:\n    - {role: client, token: client-token-0123456789, name: a}\n"
        "    - {role: admin, token: admin-token-0123456789, name: a}\n",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["config", "check", str(path)])
    assert result.exit_code == 1
    assert result.stderr.startswith("error: api.tokens[1].name: duplicates api.tokens[0].name")
    assert result.stderr.count("\n") == 1
