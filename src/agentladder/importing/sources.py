"""Which reader takes which file: ``--format``, else the file's suffix (``.jsonl`` JSONL,
``.eval`` and ``.json`` Inspect logs); the files of folders as ``walk`` finds them.
Langfuse pages (``--format langfuse``) are never told by suffix: every file is read as
pages of Langfuse's public API together (``langfuse.read_langfuse``).

Every Inspect log is read twice. The first pass (``inspect_logs.survey``) reads it whole,
keeping its scorers' numbers: a log that cannot be read to its end, or holds no sample,
is then one refused entry naming it and why, and none of its samples is imported (no log
is half imported); without ``--scale`` each scorer's scale is decided from all its
values. The second pass reads the samples of the logs that passed into judgments.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Literal

from agentladder.domain.scales import detect
from agentladder.errors import shown_value
from agentladder.importing.bounds import ImportBounds
from agentladder.importing.inspect_logs import (
    LOG_SUFFIXES,
    InspectOptions,
    read_inspect_log,
    survey,
)
from agentladder.importing.items import Item
from agentladder.importing.jsonl import read_jsonl
from agentladder.importing.langfuse import LangfuseOptions, read_langfuse

__all__ = ["Format", "count_lines", "format_of", "read_sources"]

Format = Literal["jsonl", "inspect", "langfuse"]


def format_of(path: Path, given: Format | None) -> Format | None:
    """The format of a file: the one given, else by suffix; None when the suffix says none."""
    if given is not None:
        return given
    if path.suffix == ".jsonl":
        return "jsonl"
    if path.suffix in LOG_SUFFIXES:
        return "inspect"
    return None


def read_sources(
    files: Sequence[Path],
    given: Format | None,
    options: InspectOptions,
    bounds: ImportBounds | None = None,
    langfuse: LangfuseOptions | None = None,
) -> Iterator[Item]:
    """Every item of every file, in order, read within ``bounds`` (module docstring)."""
    bounds = bounds or ImportBounds()
    if given == "langfuse":
        yield from read_langfuse(files, langfuse or LangfuseOptions(), bounds)
        return
    ranges: dict[str, list[float]] = {}
    refused: dict[Path, str] = {}
    for path in files:
        if format_of(path, given) == "inspect":
            problem = survey(path, options, bounds, ranges)
            if problem is not None:
                refused[path] = problem
    if options.scale is None:  # each scorer's scale, from all its values
        options.scales = {name: detect(low, high) for name, (low, high) in ranges.items()}
    for path in files:
        kind = format_of(path, given)
        if kind is None:
            yield Item(str(path), error=f"file: is not a .jsonl, .eval or .json file; give"
                       f" --format jsonl or inspect ({shown_value(str(path))})")  # fmt: skip
        elif kind == "jsonl":
            yield from read_jsonl(
                path, options.task_type, bounds.max_line, options.scale,
                success_from=options.success_from, include_errors=options.include_errors,
            )  # fmt: skip
        elif path in refused:
            yield Item(str(path), error=refused[path])
        else:
            yield from read_inspect_log(path, options, bounds)


def count_lines(files: Sequence[Path], given: Format | None) -> int | None:
    """The lines of the JSONL files (a progress bar's total); None when a log is among them."""
    total = 0
    for path in files:
        kind = format_of(path, given)
        if kind in ("inspect", "langfuse"):
            return None
        if kind is None:
            continue
        try:
            with path.open("rb") as data:
                while block := data.read(1 << 20):
                    total += block.count(b"\n")
        except OSError:
            continue  # said by its reader
    return total
