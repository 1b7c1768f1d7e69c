"""Reading a provider's event stream as it passes through the gateway: its lines found in
one linear pass, every size bounded, its start checked, its usage and text counted, and
(when the gateway asked for the usage the caller did not) its usage-only event taken out.
Pure: bytes in, bytes out, no I/O; ``upstream.py`` reads the network and keeps the time.

A line is found by looking for its newline in the new bytes only: the unended line is
kept in one buffer and never searched or joined again, so a line that drips in a byte at a
time costs as much as one sent whole. The bounds (an agent's backend settings) make a
stream the agent's failure, ``ProviderError`` of kind ``limit`` naming the bound:

- ``max_line_bytes``: a line (its ended part or its unended part so far) longer;
- ``max_start_bytes``: more bytes before the first event's line (blank lines, comments,
  other fields, or an unended line that is not a ``data:`` line);
- ``max_stream_bytes``: more bytes in the whole stream.

Passed on: the bytes as they came (``strip_usage`` false), else the ended lines but a
usage-only event's (a ``data:`` chunk with ``usage`` and no choice) and the blank line
ending it; an unended line is held until its end comes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentladder.errors import ProviderError
from agentladder.services.gateway.estimate import Tally
from agentladder.services.gateway.shapes import error_message, start_line

__all__ = ["Bounds", "EventReader"]

_HEAD = 512
"""The most of a stream's start kept to quote when it is not an event stream."""


@dataclass(frozen=True, slots=True)
class Bounds:
    """A stream's size bounds, in bytes (an agent's backend settings)."""

    max_line_bytes: int
    max_start_bytes: int
    max_stream_bytes: int


def _usage_only(event: Mapping[str, Any]) -> bool:
    """Whether a chunk is a stream's usage-only one (``usage``, ``choices: []``)."""
    return event.get("usage") is not None and event.get("choices") == []


@dataclass
class EventReader:
    """One stream's reader; see the module. ``feed`` each chunk, ``close`` at its end."""

    tally: Tally
    bounds: Bounds
    strip_usage: bool = False
    started: bool = False
    """Its first event's ``data:`` line was read (and checked): it may go to the caller."""
    done: bool = False
    """Its ``data: [DONE]`` was read: the answer is whole."""
    error: str | None = None
    """The message of an error event it sent (``data: {"error": ...}``)."""
    received: int = 0
    _buffer: bytearray = field(default_factory=bytearray, repr=False)
    _before: int = 0
    _head: bytearray = field(default_factory=bytearray, repr=False)
    _skip_blank: bool = False

    def feed(self, chunk: bytes) -> bytes:
        """Read ``chunk``; what to pass on of it (and of earlier unended lines)."""
        self.received += len(chunk)
        if self.received > self.bounds.max_stream_bytes:
            raise ProviderError("limit", f"the stream passed max_stream_bytes"
                                f" ({self.bounds.max_stream_bytes} bytes): cut")  # fmt: skip
        if not self.started and len(self._head) < _HEAD:
            self._head += chunk[: _HEAD - len(self._head)]
        buffer = self._buffer
        searched = len(buffer)
        buffer += chunk
        out = bytearray()
        start, at = 0, buffer.find(b"\n", searched)
        while at != -1:
            line = bytes(buffer[start : at + 1])
            start = at + 1
            if self._line(line) and self.strip_usage:
                out += line
            at = buffer.find(b"\n", start)
        if start:
            del buffer[:start]
        self._check_unended()
        return bytes(out) if self.strip_usage else chunk

    def close(self) -> bytes:
        """The stream ended: its unended last line read as a line; what to pass on."""
        line, self._buffer = bytes(self._buffer), bytearray()
        if line and self._line(line) and self.strip_usage:
            return line
        return b""

    def _check_unended(self) -> None:
        """The unended line's bounds: ``max_line_bytes``, and before the first event
        ``max_start_bytes`` unless it is the first event's ``data:`` line."""
        unended = len(self._buffer)
        first_data = self._buffer[:5] == b"data:"[: min(unended, 5)]
        if not self.started and not first_data:
            self._count_start(unended)
        if unended > self.bounds.max_line_bytes:
            self._line_too_long()

    def _line_too_long(self) -> None:
        raise ProviderError("limit", f"a line of the stream passed max_line_bytes"
                            f" ({self.bounds.max_line_bytes} bytes): cut")  # fmt: skip

    def _count_start(self, size: int) -> None:
        if self._before + size > self.bounds.max_start_bytes:
            raise ProviderError("limit", f"more than max_start_bytes"
                                f" ({self.bounds.max_start_bytes} bytes) before the stream's"
                                " first event")  # fmt: skip

    def _line(self, line: bytes) -> bool:
        """Read one line (with its newline, if it has one); whether it is passed on."""
        if len(line.rstrip(b"\r\n")) > self.bounds.max_line_bytes:
            self._line_too_long()
        if not self.started:
            self.started = start_line(line, bytes(self._head))
            if not self.started:
                self._count_start(len(line))
                self._before += len(line)
        data = line.strip()
        if not data:
            skip, self._skip_blank = self._skip_blank, False
            return not skip
        self._skip_blank = False
        if not data.startswith(b"data:"):
            return True
        data = data[5:].strip()
        if data == b"[DONE]":
            self.done = True
            return True
        try:
            event = json.loads(data) if data else None
        except (ValueError, RecursionError):
            return True
        if not isinstance(event, Mapping):
            return True
        self.error = self.error or error_message(event)
        self.tally.see_choices(event.get("choices"), "delta")
        self.tally.see_usage(event.get("usage"))
        if self.strip_usage and _usage_only(event):
            self._skip_blank = True
            return False
        return True
