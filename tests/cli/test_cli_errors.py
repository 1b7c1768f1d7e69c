"""Every command's failure is one line on stderr, exit 1; the traceback only with --debug."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from agentladder.cli import app

runner = CliRunner()


def one_line(args: list[str], code: int = 1) -> str:
    """Run the command; assert it failed with ``code`` and printed exactly one line."""
    result = runner.invoke(app, args)
    assert result.exit_code == code, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert "Traceback" not in result.output
    return lines[0]


def test_a_score_out_of_range_is_one_line_naming_field_and_value() -> None:
    """judge --score 11: `score: ... (11.0)`, exit 1, no traceback."""
    line = one_line(["judge", "--agent-id", "a", "--contract-id", "c", "--score", "11",
                     "--store", "memory://"])  # fmt: skip
    assert line.startswith("error: score: ")
    assert line.endswith("(11.0)")


def test_a_bad_agent_name_is_one_line_naming_field_and_value() -> None:
    """judge --agent-id 'bad name!': the field agent_id and the value are named."""
    line = one_line(["judge", "--agent-id", "bad name!", "--contract-id", "c",
                     "--store", "memory://"])  # fmt: skip
    assert "agent_id: " in line
    assert "'bad name!'" in line


def test_an_option_that_is_not_a_number_is_one_line_exit_1() -> None:
    """judge --score abc: click's bad value is one line naming --score, exit 1 (not 2)."""
    line = one_line(["judge", "--agent-id", "a", "--contract-id", "c", "--score", "abc"])
    assert line.startswith("error: --score: ")


def test_a_usage_mistake_is_one_line_exit_2() -> None:
    """An unknown command is a usage mistake: one line with the suggestion, exit 2."""
    line = one_line(["judgee"], code=2)
    assert "No such command 'judgee'" in line
    assert "'judge'" in line


def test_an_unreadable_config_is_one_line(short_path: Path) -> None:
    """A config file that does not exist: `config: cannot be read (...)`, exit 1."""
    line = one_line(["config", "check", str(short_path / "absent.yaml")])
    assert line.startswith("error: config: cannot be read")
    assert "absent.yaml" in line


def test_debug_raises_the_error_itself() -> None:
    """agentladder --debug: the error is raised as is (its traceback shows), not one line."""
    result = runner.invoke(app, ["--debug", "judge", "--agent-id", "a", "--contract-id", "c",
                                 "--score", "11", "--store", "memory://"])  # fmt: skip
    assert result.exit_code == 1
    assert isinstance(result.exception, ValidationError)
    assert "error: score" not in result.output


@pytest.mark.parametrize("args", [["--help"], ["judge", "--help"]])
def test_help_still_exits_0(args: list[str]) -> None:
    """--help at the top and on a command prints the help and exits 0."""
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output


def test_a_reader_that_goes_away_ends_it_quietly(tmp_path: Path) -> None:
    """``agentladder judge --help | head -30``: head leaves while the help is still being
    written; the command ends without a word on stderr (it printed 'error:
    BrokenPipeError: Broken pipe')."""
    err = tmp_path / "stderr"
    command = f"{shlex.quote(sys.executable)} -m agentladder.cli judge --help 2>{err} | head -30"
    shown = subprocess.run(["bash", "-c", command], capture_output=True, timeout=60, check=True)
    assert shown.stdout.count(b"\n") == 30
    assert err.read_text() == ""
