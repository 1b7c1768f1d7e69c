"""``agentladder deliberate`` shows its progress on stderr while it runs, a line per round,
leaving stdout to its output; its question is USER_QUERY, the API's ``user_query``."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from agentladder.cli import app
from tests.cli.test_cli_data import config_file

runner = CliRunner()
LINE = re.compile(
    r"^round (\d) of 2: (\d+) proposals \((\d+) answered\), (\d+) evaluations"
    r" \((\d+) answered\), \d+\.\d s$"
)


def test_progress_is_a_line_per_round_on_stderr_and_stdout_stays_json(tmp_path: Path) -> None:
    """Two rounds among two agents: stderr holds one line per round whose counts are the
    stored record's proposals and evaluations; stdout is the JSON record alone."""
    config = str(config_file(tmp_path))
    result = runner.invoke(app, ["deliberate", "Which is best?", "--agent", "sim_a", "--agent",
                                 "sim_b", "--config", config, "--create", "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record["request"]["user_query"] == "Which is best?"
    lines = result.stderr.splitlines()
    assert len(lines) == len(record["rounds"]) == 2
    for line, stored in zip(lines, record["rounds"], strict=True):
        found = LINE.match(line)
        assert found is not None, line
        number, proposals, proposed, evaluations, evaluated = map(int, found.groups())
        assert number == stored["number"]
        assert proposals == proposed == len(stored["proposals"]) == 2
        made = sum(len(p["evaluations"]) for p in stored["proposals"])
        assert evaluations == evaluated == made == 2


def test_quiet_shows_no_progress(tmp_path: Path) -> None:
    """--quiet: nothing on stderr; the table on stdout as before."""
    config = str(config_file(tmp_path))
    result = runner.invoke(app, ["deliberate", "Which is best?", "--agent", "sim_a", "--agent",
                                 "sim_b", "--config", config, "--create", "--quiet"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert result.stdout.startswith("deliberation ")


def test_the_question_is_named_as_the_api_names_it() -> None:
    """deliberate's help names its argument USER_QUERY, the API's field."""
    result = runner.invoke(app, ["deliberate", "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "USER_QUERY" in result.output
    assert "user_query" in result.output
