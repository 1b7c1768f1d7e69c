"""The README's two commands are the ones a newcomer and CI use."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_readme_shows_the_two_commands_first() -> None:
    """The first code block of the README is `make demo` then `make test`."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", readme, re.S)
    assert block is not None
    commands = [line.split("#")[0].strip() for line in block.group(1).splitlines()]
    assert commands == ["make demo", "make test"]


def test_ci_runs_the_readme_test_command() -> None:
    """.ci/run calls `make test`, and the Makefile's test target runs lint, mypy and pytest."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^make test$", ci, re.M)
    assert re.search(r"^make demo$", ci, re.M)  # the README's other command
    assert re.search(r"^make test-faults$", ci, re.M)
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^test: lint typecheck unit$", makefile, re.M)
    assert "mypy src" in makefile
    assert "pytest" in makefile


def test_make_unit_runs_the_suite_on_workers() -> None:
    """`make unit` runs pytest on one xdist worker per CPU and one more, a file's tests on
    one worker; the dev extra installs pytest-xdist; `make test-faults` stays in one
    process."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    unit = re.search(r"^unit:.*\n((?:\t.*\n)+)", makefile, re.M)
    assert unit is not None
    assert "$(BIN)/pytest -n $(WORKERS) --dist loadfile" in unit.group(1)
    assert "WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))" in makefile.splitlines()
    faults = re.search(r"^test-faults:.*\n((?:\t.*\n)+)", makefile, re.M)
    assert faults is not None
    assert " -n " not in faults.group(1)
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^    "pytest-xdist>=[0-9.]+",$', pyproject, re.M)
    development = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    assert "-n 0" in development


def test_every_cli_command_is_documented() -> None:
    """Each `agentladder` command and subcommand is named in the README or docs/cli.md."""
    import typer.main

    from agentladder.cli import app

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    readme += (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    group = typer.main.get_group(app)
    names = []
    for name, command in group.commands.items():
        subcommands = getattr(command, "commands", None)
        if subcommands:
            names += [f"{name} {sub}" for sub in subcommands]
        else:
            names.append(name)
    assert names
    missing = [name for name in names if f"agentladder {name}" not in readme]
    assert missing == []
