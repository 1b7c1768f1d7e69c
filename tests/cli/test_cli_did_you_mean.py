"""Did you mean, on the command line: ``deliberate --agent``, ``profile``, ``route
--task-type`` (from the store and from a server), each one line; a configuration's errors
name the agent by its id, and a YAML syntax error is one line with its line and column."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from typer.testing import CliRunner

from agentladder.cli import app
from tests.cli.test_cli_data import config_file, run
from tests.served import start_server

runner = CliRunner()


def test_deliberate_naming_an_agent_nobody_knows_is_one_line_with_the_closest(
    tmp_path: Path,
) -> None:
    """``--agent simb`` for sim_b: one line naming agent_names, the suggestion and the
    value; exit 1, nothing run."""
    config = str(config_file(tmp_path))
    result = runner.invoke(app, ["deliberate", "q", "--agent", "sim_a", "--agent", "simb",
                                 "--config", config, "--create", "--quiet"])  # fmt: skip
    assert result.exit_code == 1, result.output
    assert result.output.strip().splitlines() == [
        "error: agent_names: names an agent nobody knows (configured, registered or judged"
        " before); did you mean sim_b? ('simb')"
    ]


def test_profile_of_a_typo_offers_the_closest_agent(tmp_path: Path) -> None:
    """``profile sima``: one line, ``did you mean sim_a?``, exit 1."""
    config = str(config_file(tmp_path))
    run("judge", "--agent-id", "sim_a", "--contract-id", "c1", "--score", "5", "--config",
        config, "--create")  # fmt: skip
    result = runner.invoke(app, ["profile", "sima", "--config", config])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "error: profile 'sima' not found; did you mean sim_a?"
    ]


def test_route_at_a_task_type_without_evidence_warns_on_stderr(tmp_path: Path) -> None:
    """``route --task-type aduit`` after judgments at ``audit``: the routing is shown
    (stdout: the JSON with its warning), and stderr says no agent has evidence there, did
    you mean audit?"""
    config = str(config_file(tmp_path))
    for agent in ("sim_a", "sim_b"):
        run("judge", "--agent-id", agent, "--contract-id", f"c-{agent}", "--score", "5",
            "--task-type", "audit", "--config", config, "--create")  # fmt: skip
    result = runner.invoke(app, ["route", "--task-type", "aduit", "--config", config, "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert len(out["agents"]) == 1
    warning = (
        "warning: no agent has evidence at task type 'aduit': routed on predicted skill (the"
        " fleet's level and the agents' other task types); did you mean audit?"
    )
    assert out["warnings"] == [warning.removeprefix("warning: ")]
    assert result.stderr.splitlines()[0] == warning
    known = runner.invoke(app, ["route", "--task-type", "audit", "--config", config, "--json"])
    assert "warning" not in known.stderr


def test_route_asking_a_server_prints_its_warning(tmp_path: Path) -> None:
    """``route --server`` at a task type without evidence: the server's warning, one line
    on stderr."""
    server = start_server(tmp_path, "agents:\n  - name: sim_a\n    backend: {kind: simulated}\n")
    try:
        judged = httpx.post(
            server.url("/oracle/judgments"),
            json={"agent_id": "sim_a", "contract_id": "c-1", "score": 7, "task_type": "code"},
            timeout=10,
        )
        assert judged.status_code == 200, judged.text
        result = runner.invoke(app, ["route", "--task-type", "cdoe", "--server", server.url("")])
        assert result.exit_code == 0, result.output
        assert result.stderr.splitlines() == [
            "warning: no agent has evidence at task type 'cdoe': routed on predicted skill"
            " (the fleet's level and the agents' other task types); did you mean code?"
        ]
    finally:
        server.stop()


def test_a_config_error_names_the_agent_by_its_id(tmp_path: Path) -> None:
    """``agents[echo].backend.openai.timeout_s`` (not ``agents[0]``) in ``config check``
    and ``serve``; a bad name itself is still named by its place."""
    path = tmp_path / "c.yaml"
    path.write_text(
        "agents:\n  - name: echo\n"
        "    backend: {kind: openai, base_url: 'http://127.0.0.1:9', timeout_s: -1}\n"
        "  - name: 'bad name'\n",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["config", "check", str(path)])
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "error: agents[echo].backend.openai.timeout_s: Input should be greater than 0 (-1)",
        "error: agents[1].name: must be 1 to 64 characters from A-Z a-z 0-9 _ . - ('bad name')",
    ]
    served = runner.invoke(app, ["serve", "--config", str(path), "--db", str(tmp_path / "x.db")])
    assert served.exit_code == 1
    assert "agents[1].name" in served.output  # the first error, the name, by its place
    path.write_text(path.read_text(encoding="utf-8").replace("'bad name'", "ok"), "utf-8")
    served = runner.invoke(app, ["serve", "--config", str(path), "--db", str(tmp_path / "x.db")])
    assert served.exit_code == 1
    assert "agents[echo].backend.openai.timeout_s" in served.output
    assert not (tmp_path / "x.db").exists()


def test_a_yaml_syntax_error_is_one_line_with_line_and_column(short_path: Path) -> None:
    """An unclosed flow mapping: one line naming the file, line 4 column 9 and the
    problem, for ``config check`` and ``serve`` alike."""
    path = short_path / "broken.yaml"
    path.write_text(
        "agents:\n  - name: a\n    backend: {kind: openai\n  - name: b\n", encoding="utf-8"
    )
    line = (
        "config: is not valid YAML at line 4, column 9: expected ',' or '}', but got ':'"
        f" ({str(path)!r})"
    )
    result = runner.invoke(app, ["config", "check", str(path)])
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [f"error: {line}"]
    served = runner.invoke(app, ["serve", "--config", str(path), "--db", str(short_path / "x.db")])
    assert served.exit_code == 1
    assert served.output.strip().splitlines() == [f"invalid configuration: {line}"]


def test_leaderboard_and_skills_at_a_task_type_nobody_has_offer_the_closest(
    tmp_path: Path,
) -> None:
    """``leaderboard --task-type aduit`` and ``skills --task-type aduit`` after a judgment
    at ``audit``: nobody there, did you mean audit?; a task type nothing is close to keeps
    the how-to-start line."""
    config = str(config_file(tmp_path))
    run("judge", "--agent-id", "sim_a", "--contract-id", "c1", "--score", "7", "--task-type",
        "audit", "--config", config, "--create")  # fmt: skip
    board = run("leaderboard", "--task-type", "aduit", "--config", config)
    assert board.strip() == "Nobody has been judged in aduit yet; did you mean audit?"
    skills = run("skills", "--task-type", "aduit", "--config", config)
    assert skills.splitlines()[0] == "No skill evidence at aduit yet; did you mean audit?"
    far = run("leaderboard", "--task-type", "translation", "--config", config)
    assert "did you mean" not in far
    assert "agentladder judge" in far


def test_an_agent_process_for_a_name_not_in_the_config_offers_the_closest(
    tmp_path: Path,
) -> None:
    """``agentladder agent --name sim-a``: one line, not an agent of the file, did you mean sim_a?;
    exit 1 before any connection."""
    config = str(config_file(tmp_path))
    result = runner.invoke(app, ["agent", "--name", "sim-a", "--config", config,
                                 "--server", "http://127.0.0.1:9"])  # fmt: skip
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"error: name: is not an agent of {config}; did you mean sim_a? ('sim-a')"
    ]
