"""Reading a large JSON document within bounds: stream it through ijson's parser (C,
yajl2) and keep only the fields asked for, never the document.

- ``JsonGuard`` wraps the bytes: it refuses a run of more than ``max_string`` bytes
  without a string boundary (the one thing the parser buffers whole is a string or a
  number token), and turns Python's ``NaN``, ``Infinity`` and ``-Infinity``, which
  Inspect writes and JSON parsers refuse, into the strings ``"NaN"``, ``"Infinity"``
  and ``"-Infinity"``. Both on whole chunks with bytes methods (C speed): a quote escaped
  by an odd run of backslashes is told from a real one by replacing escaped pairs first.
- ``Events`` checks the nesting depth (``MAX_DEPTH``). The C parser refuses integers past
  64 bits (``IntegerOverflow``): the readers then read that document again with ijson's
  pure-Python parser (``slow``), about ten times slower, which takes them.
- ``project`` keeps what a shape
  names (``KEEP`` a value whole, within a ``Budget``; ``PRESENT`` only whether it is not
  null; a mapping of keys, ``"*"`` for any key; ``Picked``: of an array, the few elements
  a test picks, each projected by its own shape) and skips the rest without building it.

A document that is not JSON, nests too deep or holds too long a string is
``InvalidInput("file", ...)`` naming where and the bound.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, Union

from agentladder.errors import InvalidInput
from agentladder.importing.bounds import MAX_DEPTH, shown_size

__all__ = [
    "KEEP",
    "PRESENT",
    "Budget",
    "Events",
    "IntegerOverflow",
    "JsonGuard",
    "Picked",
    "Shape",
    "project",
    "skip",
]

KEEP = "keep"
PRESENT = "present"
Shape = Union[Mapping[str, "Shape"], str, "Picked"]


@dataclass(frozen=True)
class Picked:
    """Of an array, the elements ``pick`` accepts once projected by ``shape``, at most
    ``most`` of them (the first), and those ``latest`` accepts, the last ``latest_most``
    of them, all in the array's order: each element is projected within a budget of its
    own, and only the ones kept count in the sample's (an agent's transcript may hold
    thousands of events of which a few matter)."""

    shape: Shape
    pick: Callable[[Any], bool]
    most: int = 20
    latest: Callable[[Any], bool] | None = None
    latest_most: int = 0


READ_SIZE = 1 << 20
"""Bytes the parser asks for at a time. The C parser lexes a string that spans reads again
from its start at each read, so a 32 MiB string took 6.6 s in reads of 64 KiB (ijson's
default) and a few tenths of a second in reads of 1 MiB."""
_LETTERS = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-"
_STARTS = ("start_map", "start_array")
_ENDS = ("end_map", "end_array")


class Readable(Protocol):
    """What a byte stream offers: ``read(n)``, ``b""`` only at its end."""

    def read(self, size: int, /) -> bytes: ...


class JsonGuard:
    """``source``'s bytes, checked and fixed as the module docstring says; ``where``
    (the file, with the member) and ``option`` name the refusal."""

    def __init__(self, source: Readable, max_string: int, where: str, path: str) -> None:
        self.source = source
        self.max_string = max_string
        self.where = where
        self.path = path
        self.inside = False  # within a string, after what was handed on
        self.run = 0  # bytes since the last string boundary
        self.carry = b""  # held back: a trailing run of backslashes, or of letters

    def read(self, size: int = 1 << 16, /) -> bytes:
        """The next bytes (``b""`` at the end only, or for ``read(0)``, which ijson asks to
        see whether the stream gives bytes)."""
        if size == 0:
            return b""
        while True:
            chunk = self.source.read(size)
            data = self.carry + chunk
            if not chunk:
                self.carry = b""
                return self._pass(data)
            if data.endswith(b"\\"):  # the escape's parity is known once the run ends
                held = len(data) - len(data.rstrip(b"\\"))
                if held > self.max_string:  # a run of backslashes is a string's too
                    self.run = held
                    self._check_run()
            else:  # a NaN or Infinity may go on in the next chunk
                held = min(9, len(data) - len(data.rstrip(_LETTERS)))
            self.carry = data[len(data) - held :]
            if held < len(data):
                return self._pass(data[: len(data) - held])

    def _pass(self, data: bytes) -> bytes:
        plain = data.replace(b"\\\\", b"__").replace(b'\\"', b"__")  # same length
        quotes = plain.count(b'"')
        if quotes == 0:
            self.run += len(data)
        else:
            self.run += plain.find(b'"')
            self._check_run()
            self.run = len(data) - 1 - plain.rfind(b'"')
        self._check_run()
        if b"NaN" in data or b"Infinity" in data:
            data = self._constants(data, plain)
        self.inside ^= quotes % 2 == 1
        return data

    def _check_run(self) -> None:
        if self.run > self.max_string:
            raise InvalidInput("file", self.path, f"{self.where} holds a string or number"
                               f" longer than {shown_size(self.max_string)}, the bound"
                               " (--max-string)")  # fmt: skip

    def _constants(self, data: bytes, plain: bytes) -> bytes:
        """``data`` with NaN and (-)Infinity outside strings quoted (rare: a slow pass)."""
        parts: list[bytes] = []
        inside, start = self.inside, 0
        while True:
            end = plain.find(b'"', start)
            stop = len(data) if end < 0 else end + 1
            piece = data[start:stop]
            if not inside:
                piece = (
                    piece.replace(b"-Infinity", b"\0")
                    .replace(b"Infinity", b'"Infinity"')
                    .replace(b"NaN", b'"NaN"')
                    .replace(b"\0", b'"-Infinity"')
                )
            parts.append(piece)
            if end < 0:
                return b"".join(parts)
            inside = not inside
            start = stop


class IntegerOverflow(InvalidInput):
    """The C parser met an integer past 64 bits: read the document again ``slow``."""


class Events:
    """ijson's events of ``stream``, with the nesting depth checked; ``slow``: with the
    pure-Python parser."""

    def __init__(self, stream: Readable, where: str, path: str, slow: bool = False) -> None:
        import ijson  # noqa: PLC0415 (the optional extra agentladder[inspect])

        if slow:
            from ijson.backends import python as parser  # noqa: PLC0415
        else:
            parser = ijson
        # 1 MiB reads: a string spanning reads is lexed again from its start at each one
        events = parser.basic_parse(stream, use_float=True, buf_size=READ_SIZE)
        self._events: Iterator[tuple[str, Any]] = events
        self._error = ijson.JSONError
        self.where = where
        self.path = path
        self.depth = 0

    def next(self) -> tuple[str, Any]:
        """The next event; ``InvalidInput`` for a document that is not JSON or ends early."""
        try:
            event, value = next(self._events)
        except StopIteration:
            raise self._refused("ends in the middle of the JSON") from None
        except self._error as error:
            raise self._not_json(error) from None
        if event in _STARTS:
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise self._refused(f"nests deeper than {MAX_DEPTH} levels")
        elif event in _ENDS:
            self.depth -= 1
        return event, value

    def finish(self) -> None:
        """The document must end here (nothing but whitespace after it)."""
        try:
            extra = next(self._events)
        except StopIteration:
            return
        except self._error as error:
            raise self._not_json(error) from None
        raise self._refused(f"goes on after its JSON value ({extra[0]})")

    def _not_json(self, error: Exception) -> InvalidInput:
        first = " ".join(str(error).split())[:120]
        reason = f"{self.where} is not JSON ({first})"
        if "integer overflow" in first:
            return IntegerOverflow("file", self.path, reason)
        return InvalidInput("file", self.path, reason)

    def _refused(self, reason: str) -> InvalidInput:
        return InvalidInput("file", self.path, f"{self.where} {reason}")


class Budget:
    """How much a projection may keep: ``events`` values and ``text`` characters."""

    def __init__(self, events: int = 10_000, text: int = 1 << 20) -> None:
        self.events = events
        self.text = text
        self.over: str | None = None  # the field that went over, once one did
        self._given = (events, text)

    def charge(self, spent: Budget, field: str) -> bool:
        """Count what ``spent`` (another budget) took; False once over."""
        self.events -= spent._given[0] - spent.events
        self.text -= spent._given[1] - spent.text
        if self.over is None and (self.events < 0 or self.text < 0):
            self.over = field
        return self.over is None

    def take(self, value: Any, field: str) -> bool:
        """Count ``value``; False once over (and ``over`` names ``field``)."""
        self.events -= 1
        if isinstance(value, str):
            self.text -= len(value)
        if self.over is None and (self.events < 0 or self.text < 0):
            self.over = field
        return self.over is None


def skip(events: Events, event: str) -> None:
    """Skip the rest of the value whose first event was ``event``."""
    if event in _STARTS:
        depth = events.depth - 1
        while events.depth > depth:
            events.next()


def project(
    events: Events, event: str, value: Any, shape: Shape, budget: Budget, field: str = ""
) -> Any:
    """The value starting with ``event, value``, as ``shape`` keeps it (see the module
    docstring); None for a value kept past the budget (``budget.over`` says which)."""
    if shape == PRESENT:
        skip(events, event)
        return event != "null"
    if isinstance(shape, Picked):
        return _picked(events, event, shape, budget, field)
    if isinstance(shape, str) or event != "start_map":
        return _whole(events, event, value, budget, field)
    kept: dict[str, Any] = {}
    while True:
        event, key = events.next()
        if event == "end_map":
            return kept
        part = shape.get(key, shape.get("*"))
        first, first_value = events.next()
        if part is None:
            skip(events, first)
        else:
            name = f"{field}.{key}" if field else str(key)
            kept[key] = project(events, first, first_value, part, budget, name)


def _picked(events: Events, event: str, shape: Picked, budget: Budget, field: str) -> Any:
    """The elements of an array that ``shape`` picks (None for a value that is not one)."""
    if event != "start_array":
        skip(events, event)
        return None
    kept: list[tuple[int, Any]] = []
    latest: deque[tuple[int, Any, Budget]] = deque(maxlen=max(1, shape.latest_most))
    index = 0
    while (item := events.next())[0] != "end_array":
        own = Budget()
        element = project(events, item[0], item[1], shape.shape, own, field)
        index += 1
        if own.over is not None:
            continue
        if len(kept) < shape.most and shape.pick(element):
            if budget.charge(own, field):
                kept.append((index, element))
        elif shape.latest is not None and shape.latest_most and shape.latest(element):
            latest.append((index, element, own))  # charged once the array ended
    for index, element, own in latest:
        if budget.charge(own, field):
            kept.append((index, element))
    return [element for _, element in sorted(kept, key=lambda pair: pair[0])]


def _whole(events: Events, event: str, value: Any, budget: Budget, field: str) -> Any:
    """The whole value starting with ``event, value``, built without recursion."""
    if event not in _STARTS:
        return value if budget.take(value, field) else None
    root: Any = {} if event == "start_map" else []
    stack: list[Any] = [root]
    keys: list[str] = [""]
    while stack:
        event, value = events.next()
        if event in _ENDS:
            stack.pop()
            keys.pop()
            continue
        if event == "map_key":
            keys[-1] = value
            budget.take(value, field)
            continue
        item: Any = {} if event == "start_map" else [] if event == "start_array" else value
        if not budget.take(item, field):
            skip(events, event)
            continue
        top = stack[-1]
        if isinstance(top, list):
            top.append(item)
        else:
            top[keys[-1]] = item
        if event in _STARTS:
            stack.append(item)
            keys.append("")
    return root if budget.over is None else None
