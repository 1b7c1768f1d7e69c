"""Every command's --help at 80 columns wraps by the width, never at a docstring's line
end: no line breaks off mid-sentence where the next word would fit."""

from __future__ import annotations

import itertools
import re

import pytest
import typer.main
from typer.testing import CliRunner

from agentladder.cli import app

runner = CliRunner()
WIDTH = 80


def command_paths() -> list[list[str]]:
    """Every command and subcommand, as the words that name it."""
    group = typer.main.get_group(app)
    paths: list[list[str]] = [[]]
    for name, command in group.commands.items():
        subcommands = getattr(command, "commands", None)
        paths.append([name])
        paths += [[name, sub] for sub in subcommands or {}]
    return paths


def needless_breaks(lines: list[str], room: int) -> list[str]:
    """The lines (of one paragraph or cell each, in order; "" ends one) after which the
    next line's first word would still have fitted in ``room`` characters."""
    found = []
    for line, following in itertools.pairwise(lines):
        if not line.strip() or not following.strip():
            continue
        word = following.split()[0]
        if len(line.rstrip()) + 1 + len(word) <= room:
            found.append(f"{line.rstrip()!r} | {following.strip()!r}")
    return found


def description(output: str) -> list[str]:
    """The help's description: the lines between the usage line and the first panel."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if "Usage:" in line) + 1
    body = []
    for line in lines[start:]:
        if line.startswith(("╭", "│", "╰")):
            break
        body.append(line)
    return body


def commands_panel(output: str) -> list[str]:
    """The Commands panel's descriptions, one cell per command ("" between commands)."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if "─ Commands ─" in line) + 1
    cells: list[str] = []
    for line in lines[start:]:
        if line.startswith("╰"):
            break
        found = re.match(r"│ (\S*)(\s+)(.*?)\s*│$", line)
        assert found is not None, line
        if found.group(1):
            cells.append("")
        cells.append(" " * (2 + len(found.group(1)) + len(found.group(2)) - 1) + found.group(3))
    return cells


@pytest.mark.parametrize("path", command_paths(), ids=lambda p: "-".join(p) or "agentladder")
def test_help_at_80_columns_breaks_no_sentence_early(path: list[str]) -> None:
    """The description of the command (and, at the top, of every command in the list) is
    wrapped by the width only."""
    result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": str(WIDTH)})
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in result.output.splitlines()) <= WIDTH
    assert needless_breaks(description(result.output), WIDTH - 2) == []
    if "─ Commands ─" in result.output:
        assert needless_breaks(commands_panel(result.output), WIDTH - 3) == []


def test_no_help_text_holds_a_line_break_within_a_paragraph() -> None:
    """Every command's, option's and argument's help is one line per paragraph (the
    terminal wraps it), after the docstrings are read."""
    group = typer.main.get_group(app)
    found = []

    def visit(command: object, name: str) -> None:
        texts = [getattr(command, "help", None)]
        texts += [getattr(param, "help", None) for param in getattr(command, "params", [])]
        for text in texts:
            if isinstance(text, str) and "\n" in text.replace("\n\n", ""):
                found.append(f"{name}: {text!r}")
        for sub, child in getattr(command, "commands", {}).items():
            visit(child, f"{name} {sub}")

    visit(group, "agentladder")
    assert found == []
