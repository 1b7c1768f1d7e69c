"""Inspect AI logs (``.eval`` and ``.json``), read within bounds (``ImportBounds``): each
sample of each epoch becomes one judgment (``inspect_samples``).

A log is never held whole. A ``.eval`` log is a zip: its central directory is read
(``zipped.ZipLog``), then the run's header (``header.json``, or ``_journal/start.json``
for a log whose run never finished), then each ``samples/ID_epoch_N.json`` member in
Inspect's order (by epoch, then sample id), one at a time, each streamed through the
JSON parser keeping only the fields a judgment needs (``jsonstream``). A ``.json`` log is
one JSON document: read twice, streaming, first for its run (near its start), then for
its samples, one at a time. A first pass reads every log whole (``survey``): whether it
can be imported, and unless ``--scale`` says it, each scorer's values, from which its
scale is decided.

Reading needs ijson (and zstandard for the zstd members Inspect writes): the optional
extra ``agentladder[inspect]``. A file that cannot be read, or that breaks a bound, or
holds no sample, is one refused item naming the file (and the member and bound).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentladder.errors import InvalidInput, shown_value
from agentladder.importing.bounds import ImportBounds
from agentladder.importing.inspect_samples import (
    EVAL,
    HEADER,
    SAMPLE,
    InspectOptions,
    Run,
    chosen_value,
    run_of,
    sample_item,
)
from agentladder.importing.items import Item
from agentladder.importing.jsonstream import (
    Budget,
    Events,
    IntegerOverflow,
    JsonGuard,
    project,
    skip,
)
from agentladder.importing.zipped import Member, ZipLog

__all__ = ["LOG_SUFFIXES", "InspectOptions", "read_inspect_log", "survey"]

LOG_SUFFIXES = (".eval", ".json")
_HEADERS = ("header.json", "_journal/start.json")


def _needs() -> None:
    try:
        import ijson  # noqa: F401, PLC0415 (the optional extra)
    except ImportError:
        raise InvalidInput(
            "--format", "inspect", "needs ijson: pip install 'agentladder[inspect]'"
        ) from None


def read_inspect_log(
    path: Path, options: InspectOptions, bounds: ImportBounds | None = None
) -> Iterator[Item]:
    """Every sample x epoch of the log at ``path`` as an item, in the log's order; one
    refused item naming the file when it cannot be read (after the items read before),
    or holds no sample."""
    _needs()
    bounds = bounds or ImportBounds()
    samples = 0
    try:
        for fields, budget, run in _samples_of(path, bounds):
            samples += 1
            yield sample_item(str(path), fields, budget, run, options)
    except (InvalidInput, OSError) as error:
        yield Item(str(path), error=_unreadable(path, error))
        return
    if not samples:
        yield Item(str(path), error=_empty(path))


def _unreadable(path: Path, error: InvalidInput | OSError) -> str:
    reason = error.reason if isinstance(error, InvalidInput) else error.strerror or error
    return f"file: cannot be read as an Inspect log: {reason} ({shown_value(str(path))})"


def _empty(path: Path) -> str:
    return (
        "file: the log holds no samples (its run ended before any sample did, or it was"
        f" run without logging samples) ({shown_value(str(path))})"
    )


def survey(
    path: Path, options: InspectOptions, bounds: ImportBounds, ranges: dict[str, list[float]]
) -> str | None:
    """Read the log at ``path`` whole, widening ``ranges`` (scorer -> [lowest, highest])
    by every finite number the chosen scorer gave; why it cannot be imported (the line of
    its refusal: it cannot be read to its end, or holds no sample), or None. A log that
    cannot be read adds nothing to ``ranges``."""
    _needs()
    seen: dict[str, list[float]] = {}
    samples = 0
    try:
        for fields, _, _ in _samples_of(path, bounds):
            samples += 1
            chosen = chosen_value(fields, options.scorer)
            if chosen is None:
                continue
            name, value = chosen
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if number and math.isfinite(value):
                span = seen.setdefault(name, [value, value])
                span[0], span[1] = min(span[0], value), max(span[1], value)
    except (InvalidInput, OSError) as error:
        return _unreadable(path, error)
    if not samples:
        return _empty(path)
    for name, (low, high) in seen.items():
        span = ranges.setdefault(name, [low, high])
        span[0], span[1] = min(span[0], low), max(span[1], high)
    return None


_Sample = tuple[Any, Budget, Run]


def _samples_of(path: Path, bounds: ImportBounds) -> Iterator[_Sample]:
    """Every sample x epoch of the log, projected, with its budget and run."""
    if _is_zip(path):
        yield from _eval_log(path, bounds)
    else:
        yield from _json_log(path, bounds)


def _is_zip(path: Path) -> bool:
    """``.eval`` is a zip, ``.json`` is JSON; a log of another name (``--format
    inspect``) is a zip when it starts like one."""
    if path.suffix in LOG_SUFFIXES:
        return path.suffix == ".eval"
    with path.open("rb") as data:
        return data.read(2) == b"PK"


def _eval_log(path: Path, bounds: ImportBounds) -> Iterator[_Sample]:
    log = ZipLog(path, bounds)
    try:
        name = next((n for n in _HEADERS if n in log.members), None)
        if name is None:
            raise log.refused("is not an Inspect log (no header.json nor _journal/start.json)")
        header, _ = _member(log, log.members[name], HEADER)
        run = run_of(header, f"member {name}", str(path))
        for member in sorted(_samples(log), key=_order):
            fields, budget = _member(log, member, SAMPLE)
            yield fields, budget, run
    finally:
        log.close()


def _samples(log: ZipLog) -> list[Member]:
    return [m for n, m in log.members.items() if n.startswith("samples/") and n.endswith(".json")]


def _order(member: Member) -> tuple[int, str]:
    """Inspect's order: by epoch, then by sample id (numbers by value) from the name
    ``samples/ID_epoch_N.json``."""
    stem = member.name.removeprefix("samples/").removesuffix(".json")
    sample_id, _, epoch = stem.rpartition("_epoch_")
    key = sample_id.zfill(20) if sample_id.isdigit() else sample_id
    return (int(epoch) if epoch.isdigit() else 0), key


def _member(log: ZipLog, member: Member, shape: Any) -> tuple[Any, Budget]:
    """The member's JSON as ``shape`` keeps it, read to its end (size and CRC checked);
    read again by the slow parser if it holds an integer past 64 bits."""
    try:
        return _read_member(log, member, shape, slow=False)
    except IntegerOverflow:
        return _read_member(log, member, shape, slow=True)


def _read_member(log: ZipLog, member: Member, shape: Any, slow: bool) -> tuple[Any, Budget]:
    where = f"member {member.name}"
    stream = log.open(member)
    events = Events(JsonGuard(stream, log.bounds.max_string, where, str(log.path)),
                    where, str(log.path), slow)  # fmt: skip
    budget = Budget()
    event, value = events.next()
    kept = project(events, event, value, shape, budget)
    events.finish()
    stream.drain()
    return kept, budget


def _json_log(path: Path, bounds: ImportBounds) -> Iterator[_Sample]:
    """The samples of a ``.json`` log; read again by the slow parser, from the sample
    after the last one yielded, if it holds an integer past 64 bits."""
    try:
        header = _json_header(path, bounds, slow=False)
    except IntegerOverflow:
        header = _json_header(path, bounds, slow=True)
    run = run_of(header, "the log", str(path))
    done = 0
    try:
        for sample in _json_samples(path, bounds, run, slow=False):
            done += 1
            yield sample
    except IntegerOverflow:
        samples = _json_samples(path, bounds, run, slow=True)
        for number, sample in enumerate(samples):
            if number >= done:
                yield sample


def _json_samples(path: Path, bounds: ImportBounds, run: Run, slow: bool) -> Iterator[_Sample]:
    with path.open("rb") as data:
        events = _top(data, path, bounds, slow)
        while True:
            event, key = events.next()
            if event == "end_map":
                break
            event, _ = events.next()
            if key != "samples" or event != "start_array":
                skip(events, event)
                continue
            while (item := events.next())[0] != "end_array":
                budget = Budget()
                fields = project(events, item[0], item[1], SAMPLE, budget)
                yield fields, budget, run
        events.finish()


def _json_header(path: Path, bounds: ImportBounds, slow: bool) -> Any:
    """The ``eval`` of a ``.json`` log, read up to it (it comes first in Inspect's logs)."""
    with path.open("rb") as data:
        events = _top(data, path, bounds, slow)
        while True:
            event, key = events.next()
            if event == "end_map":
                return {}
            event, value = events.next()
            if key == "eval":
                return {"eval": project(events, event, value, EVAL, Budget())}
            skip(events, event)


def _top(data: Any, path: Path, bounds: ImportBounds, slow: bool) -> Events:
    """The events of a ``.json`` log, past the opening of its top-level object."""
    events = Events(JsonGuard(data, bounds.max_string, "the log", str(path)), "the log",
                    str(path), slow)  # fmt: skip
    if events.next()[0] != "start_map":
        raise InvalidInput("file", str(path), "the log is not a JSON object")
    return events
