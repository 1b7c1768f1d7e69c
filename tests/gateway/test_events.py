"""``events.py``: a provider's event stream read linearly, whatever its chunking, with its
bounds, and its usage-only chunk taken out when the gateway asked for it alone."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable

import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from agentladder.errors import ProviderError
from agentladder.providers.base import Usage
from agentladder.services.gateway.estimate import Tally
from agentladder.services.gateway.events import Bounds, EventReader

BOUNDS = Bounds(max_line_bytes=4096, max_start_bytes=1024, max_stream_bytes=1 << 20)


def _event(payload: object, ending: bytes = b"\n\n") -> bytes:
    return b"data: " + json.dumps(payload).encode() + ending


def _delta(**fields: object) -> dict[str, object]:
    return {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": fields}]}


USAGE = {"prompt_tokens": 30, "completion_tokens": 12, "total_tokens": 42}
USAGE_EVENT = _event({"object": "chat.completion.chunk", "choices": [], "usage": USAGE})


def _stream(pieces: list[str], ending: bytes = b"\n\n") -> bytes:
    events = [b": ping\n\n", _event(_delta(role="assistant", content=""), ending)]
    events += [_event(_delta(content=piece), ending) for piece in pieces]
    calls = [{"index": 0, "function": {"name": "f", "arguments": '{"a": 1}'}}]
    events.append(_event(_delta(tool_calls=calls), ending))
    return b"".join(events) + USAGE_EVENT + b"data: [DONE]\n\n"


def _read(chunks: list[bytes], strip: bool) -> tuple[bytes, EventReader]:
    tally = Tally(text=[])
    reader = EventReader(tally, BOUNDS, strip_usage=strip)
    out = b"".join(reader.feed(chunk) for chunk in chunks) + reader.close()
    return out, reader


def _cut(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def _feed(reader: EventReader, chunks: Iterable[bytes], passed: list[bytes]) -> None:
    """Feed ``chunks`` one by one, keeping what each passes on in ``passed`` (until one
    raises)."""
    for chunk in chunks:
        passed.append(reader.feed(chunk))


@seed(20261207)
@settings(max_examples=150, derandomize=True, deadline=None)
@given(
    pieces=st.lists(st.text(min_size=0, max_size=12), max_size=8),
    cuts=st.lists(st.integers(min_value=0, max_value=2000), max_size=40),
    crlf=st.booleans(),
    strip=st.booleans(),
)
def test_any_chunking_reads_the_same_events(
    pieces: list[str], cuts: list[int], crlf: bool, strip: bool
) -> None:
    """The same bytes cut anywhere give the same text, usage, characters, end and bytes
    passed on as read in one piece."""
    data = _stream(pieces, b"\r\n\r\n" if crlf else b"\n\n")
    whole, once = _read([data], strip)
    out, chunked = _read(_cut(data, cuts), strip)
    assert out == whole
    assert chunked.tally.text == once.tally.text == ["", *pieces]
    assert chunked.tally.chars == once.tally.chars == sum(map(len, pieces)) + len('f{"a": 1}')
    assert chunked.tally.reported == once.tally.reported == Usage(input_tokens=30, output_tokens=12)
    assert chunked.done
    assert once.done
    assert chunked.started
    assert out == (data.replace(USAGE_EVENT, b"") if strip else data)


def test_the_usage_chunk_is_kept_when_the_caller_asked() -> None:
    """Without ``strip_usage`` every byte passes as it came, the usage chunk too."""
    data = _stream(["a"])
    out, reader = _read([data], strip=False)
    assert out == data
    assert reader.tally.reported == Usage(input_tokens=30, output_tokens=12)


def test_usage_beside_choices_is_left_in_its_chunk() -> None:
    """A chunk with choices and ``usage`` (some servers add it to every chunk) is not a
    usage-only chunk: it passes, also when stripping."""
    data = _event({**_delta(content="a"), "usage": USAGE}) + b"data: [DONE]\n\n"
    out, _ = _read([data], strip=True)
    assert out == data


def test_a_long_line_dripping_byte_by_byte_is_cut_at_its_bound() -> None:
    """An unended line fed a byte at a time: cut once it passes ``max_line_bytes``, having
    passed nothing of it on (stripping holds an unended line)."""
    reader = EventReader(Tally(), BOUNDS, strip_usage=True)
    assert reader.feed(_event(_delta(content="a"))) != b""
    passed: list[bytes] = []
    with pytest.raises(ProviderError) as cut:
        _feed(reader, itertools.repeat(b"x", BOUNDS.max_line_bytes + 10), passed)
    assert passed == [b""] * BOUNDS.max_line_bytes
    assert cut.value.kind == "limit"
    assert str(cut.value) == "limit: a line of the stream passed max_line_bytes (4096 bytes): cut"


def test_a_long_line_read_byte_by_byte_under_its_bound_is_one_event() -> None:
    """A line of 4,000 bytes fed a byte at a time is read once, whole, at its newline."""
    reader = EventReader(Tally(text=[]), BOUNDS)
    line = _event(_delta(content="y" * 3900))
    for byte in line:
        reader.feed(bytes([byte]))
    assert reader.tally.text == ["y" * 3900]
    assert reader.started


def test_a_whole_line_longer_than_its_bound_is_cut() -> None:
    """A line that arrives whole in one chunk is held to ``max_line_bytes`` too."""
    reader = EventReader(Tally(), BOUNDS)
    with pytest.raises(ProviderError, match=r"max_line_bytes \(4096 bytes\)"):
        reader.feed(_event(_delta(content="z" * 5000)))


def test_a_stream_is_cut_past_its_total_bytes() -> None:
    """Valid events without end: cut once ``max_stream_bytes`` is passed."""
    bounds = Bounds(max_line_bytes=4096, max_start_bytes=1024, max_stream_bytes=10_000)
    reader = EventReader(Tally(), bounds)
    event = _event(_delta(content="more"))
    passed: list[bytes] = []
    with pytest.raises(ProviderError) as cut:
        _feed(reader, itertools.repeat(event, 10_000), passed)
    fed = len(passed) * len(event)
    assert fed <= 10_000 < fed + len(event)
    assert str(cut.value) == "limit: the stream passed max_stream_bytes (10000 bytes): cut"


@pytest.mark.parametrize(
    "start",
    [b": ping\n\n" * 200, b"\n" * 2000, b"event: x\n" * 200, b": " + b"p" * 2000],
)
def test_too_much_before_the_first_event_is_the_agents_failure(start: bytes) -> None:
    """Comments, blank lines, other fields or an unended comment past
    ``max_start_bytes`` (1024 here) before any ``data:`` line: a ``limit`` failure."""
    reader = EventReader(Tally(), BOUNDS)
    pieces = (start[at : at + 7] for at in range(0, len(start), 7))
    with pytest.raises(ProviderError) as failed:
        _feed(reader, pieces, [])
    assert str(failed.value) == (
        "limit: more than max_start_bytes (1024 bytes) before the stream's first event"
    )
    assert not reader.started


def test_a_long_first_event_is_held_to_the_line_bound_not_the_start_bound() -> None:
    """The first ``data:`` line may be longer than ``max_start_bytes`` (a whole answer in
    one event): only ``max_line_bytes`` holds it."""
    reader = EventReader(Tally(), BOUNDS)
    event = _event(_delta(content="w" * 3000))
    for at in range(0, len(event), 100):
        reader.feed(event[at : at + 100])
    assert reader.started


def test_an_unended_last_line_is_read_at_the_close() -> None:
    """A stream whose last line has no newline: read when it ends (its ``[DONE]`` too)."""
    out, reader = _read([_event(_delta(content="a")), b"data: [DONE]"], strip=True)
    assert reader.done
    assert out.endswith(b"data: [DONE]")


def test_an_error_event_midway_is_kept() -> None:
    """An error event after the start is read as the stream's error (passed on)."""
    data = _event(_delta(content="a")) + _event({"error": {"message": "gone"}})
    out, reader = _read([data], strip=True)
    assert reader.error == "gone"
    assert out == data
