"""Which reader takes which path: ``--format``, else the file's suffix (``.jsonl`` JSONL,
``.eval`` and ``.json`` Inspect logs); a folder stands for its files of those suffixes,
by name."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Literal

from agentladder.domain.scales import detect
from agentladder.errors import InvalidInput
from agentladder.importing.bounds import ImportBounds
from agentladder.importing.inspect_logs import (
    LOG_SUFFIXES,
    InspectOptions,
    read_inspect_log,
    scorer_ranges,
)
from agentladder.importing.items import Item
from agentladder.importing.jsonl import read_jsonl

__all__ = ["Format", "count_lines", "expand", "format_of", "read_sources"]

Format = Literal["jsonl", "inspect"]
_SUFFIXES = (".jsonl", *LOG_SUFFIXES)


def expand(paths: Sequence[Path]) -> list[Path]:
    """The files to read: each path, a folder's importable files by name."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.iterdir() if p.suffix in _SUFFIXES))
        elif path.is_file():
            files.append(path)
        else:
            raise InvalidInput("PATH", str(path), "no such file or folder")
    return files


def format_of(path: Path, given: Format | None) -> Format:
    """The format of a file: the one given, else by suffix."""
    if given is not None:
        return given
    if path.suffix == ".jsonl":
        return "jsonl"
    if path.suffix in LOG_SUFFIXES:
        return "inspect"
    raise InvalidInput(
        "--format", str(path), "cannot be told from the suffix; give jsonl or inspect"
    )


def read_sources(
    files: Sequence[Path],
    given: Format | None,
    options: InspectOptions,
    bounds: ImportBounds | None = None,
) -> Iterator[Item]:
    """Every item of every file, in order, read within ``bounds``."""
    bounds = bounds or ImportBounds()
    logs = [path for path in files if format_of(path, given) != "jsonl"]
    if logs and options.scale is None:  # each scorer's scale, from all its values
        ranges: dict[str, list[float]] = {}
        for path in logs:
            scorer_ranges(path, options, bounds, ranges)
        options.scales = {name: detect(low, high) for name, (low, high) in ranges.items()}
    for path in files:
        if format_of(path, given) == "jsonl":
            yield from read_jsonl(path, options.task_type, bounds.max_line, options.scale)
        else:
            yield from read_inspect_log(path, options, bounds)


def count_lines(files: Sequence[Path], given: Format | None) -> int | None:
    """The lines of the JSONL files (a progress bar's total); None when a log is among them."""
    total = 0
    for path in files:
        if format_of(path, given) != "jsonl":
            return None
        with path.open("rb") as data:
            while block := data.read(1 << 20):
                total += block.count(b"\n")
    return total
