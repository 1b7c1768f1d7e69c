"""The files an import reads, from the paths it was given: a file stands for itself; a
folder for every ``.jsonl``, ``.eval`` and ``.json`` file below it, its subfolders
included, in order of their paths. Nothing is left out silently:

- a file of another suffix, a hidden folder (its name starts with ``.``: not entered) and
  a symbolic link to a folder (not followed) below a folder given: one note per folder
  given, naming them;
- a folder with no file to read: one refused entry naming it;
- an Inspect AI eval set (``inspect eval-set`` writes ``eval-set.json``, ``logs.json``
  and ``.eval-set-id`` beside its logs): its manifests are not logs and are not imported.
  ``logs.json`` names every log of the set (its keys, relative to its folder: read
  streaming, its values, the logs' headers, skipped): one note says the set and how many
  of its logs were found, one refused entry names those listed but missing.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentladder.errors import InvalidInput, shown_value
from agentladder.importing.bounds import ImportBounds
from agentladder.importing.items import Item

__all__ = ["EVAL_SET_FILES", "MANIFESTS", "SUFFIXES", "Found", "found", "logs_listed"]

SUFFIXES = (".jsonl", ".eval", ".json")
MANIFESTS = ("eval-set.json", "logs.json")
"""The manifests ``inspect eval-set`` writes beside its logs."""
EVAL_SET_FILES = (*MANIFESTS, ".eval-set-id")
_SHOWN = 5  # names a note lists (the rest counted)


@dataclass
class Found:
    """The files to read, in order, and the entries about the rest (notes, refusals)."""

    files: list[Path] = field(default_factory=list)
    entries: list[Item] = field(default_factory=list)


def found(paths: Sequence[Path], bounds: ImportBounds | None = None) -> Found:
    """The files of ``paths`` (module docstring); ``InvalidInput("PATH")`` for a path
    that is neither a file nor a folder."""
    bounds = bounds or ImportBounds()
    result = Found()
    for path in paths:
        if path.is_dir():
            _folder(path, result, bounds)
        elif path.is_file():
            if path.name in MANIFESTS:
                result.entries.append(_note(path, "an Inspect eval set's manifest: not imported"))
            else:
                result.files.append(path)
        else:
            raise InvalidInput("PATH", str(path), "no such file or folder")
    return result


def _note(where: Path, text: str) -> Item:
    return Item(str(where), note=f"{where}: {text}")


def _refused(where: Path, error: str) -> Item:
    return Item(str(where), error=f"{error} ({shown_value(str(where))})")


def _names(names: list[str]) -> str:
    """The first few names, and how many more."""
    more = len(names) - _SHOWN
    return ", ".join(names[:_SHOWN]) + (f" and {more} more" if more > 0 else "")


def _folder(top: Path, result: Found, bounds: ImportBounds) -> None:
    files: list[Path] = []
    left: list[str] = []
    sets: list[Path] = []
    for folder, subfolders, names in os.walk(top, followlinks=False):
        here = Path(folder)
        for name in sorted(subfolders):
            if name.startswith(".") or (here / name).is_symlink():
                left.append(_relative(here / name, top) + "/")
        subfolders[:] = sorted(
            n for n in subfolders if not n.startswith(".") and not (here / n).is_symlink()
        )
        if any(name in MANIFESTS for name in names):
            sets.append(here)
        for name in sorted(names):
            path = here / name
            if name in EVAL_SET_FILES and here in sets:
                continue
            if path.suffix in SUFFIXES and name not in MANIFESTS:
                files.append(path)
            else:
                left.append(_relative(path, top))
    if not files:
        result.entries.append(_refused(top, "folder: holds no .jsonl, .eval or .json file"))
    if left:
        text = f"left out {len(left)} that are not .jsonl, .eval or .json files: {_names(left)}"
        result.entries.append(_note(top, text))
    for place in sets:
        result.entries.extend(_eval_set(place, files, bounds))
    result.files.extend(files)


def _relative(path: Path, top: Path) -> str:
    return path.relative_to(top).as_posix()


def _eval_set(folder: Path, files: Iterable[Path], bounds: ImportBounds) -> list[Item]:
    """The note of an eval set's folder, and a refusal naming the logs its ``logs.json``
    lists that are not there."""
    here = sorted(name for name in EVAL_SET_FILES if (folder / name).is_file())
    manifest = folder / "logs.json"
    below = {p.relative_to(folder).as_posix() for p in files if p.is_relative_to(folder)}
    text = f"an Inspect eval set ({', '.join(here)}): its manifests are not imported"
    if not manifest.is_file():
        return [_note(folder, f"{text}; its {len(below)} logs are")]
    try:
        listed = logs_listed(manifest, bounds)
    except InvalidInput as error:
        reason = f"file: cannot be read as an eval set's logs.json: {error.reason}"
        return [_note(folder, text), _refused(manifest, reason)]
    missing = [name for name in listed if name not in below]
    here_too = len(listed) - len(missing)
    entries = [_note(folder, f"{text}; logs.json lists {len(listed)} logs, {here_too} here")]
    if missing:
        reason = f"logs: lists {len(missing)} logs not in its folder: {_names(missing)}"
        entries.append(_refused(manifest, reason))
    return entries


def logs_listed(path: Path, bounds: ImportBounds) -> list[str]:
    """The names of the logs an eval set's ``logs.json`` lists (its keys, in order), read
    streaming within ``bounds``; ``InvalidInput`` for a file that is not such an object."""
    from agentladder.importing.jsonstream import Events, JsonGuard, skip  # noqa: PLC0415

    names: list[str] = []
    try:
        with path.open("rb") as data:
            events = Events(JsonGuard(data, bounds.max_string, "logs.json", str(path)),
                            "logs.json", str(path))  # fmt: skip
            if events.next()[0] != "start_map":
                raise InvalidInput("file", str(path), "logs.json is not a JSON object")
            while True:
                event, key = events.next()
                if event == "end_map":
                    break
                names.append(str(key))
                skip(events, events.next()[0])
            events.finish()
    except OSError as error:
        raise InvalidInput("file", str(path), str(error.strerror or error)) from None
    except ImportError:
        raise InvalidInput(
            "file", str(path), "needs ijson: pip install 'agentladder[inspect]'"
        ) from None
    return names
