"""The bounded readers under `agentladder import`: the JSON guard gives the parser the same
document whatever the chunks (escapes, NaN and Infinity across chunk boundaries), and the
zip and JSON readers refuse, naming the member and the bound, what breaks one: members
past the count, a zstd bomb, a header that lies, a damaged member, a deep nesting, a long
string; the size options are checked."""

from __future__ import annotations

import io
import json
import math
import random
import zlib
from pathlib import Path
from typing import Any

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from agentladder.cli import app
from agentladder.errors import InvalidInput
from agentladder.importing.bounds import ImportBounds
from agentladder.importing.inspect_logs import InspectOptions, read_inspect_log
from agentladder.importing.items import Item
from agentladder.importing.jsonstream import (
    KEEP,
    Budget,
    Events,
    IntegerOverflow,
    JsonGuard,
    Picked,
    project,
)
from tests.importing.bombs import zip_file
from tests.importing.logs import sample, write_log

runner = CliRunner()
HEADER = json.dumps({"eval": {"eval_id": "e1", "model": "openai/m", "task": "qa"}}).encode()
ZSTD = 93


class Pieces(io.RawIOBase):
    """``data`` handed out ``size`` bytes per read at most."""

    def __init__(self, data: bytes, size: int) -> None:
        self.data = data
        self.size = size

    def read(self, n: int = -1, /) -> bytes:
        """The next piece."""
        piece = self.data[: min(self.size, n if n >= 0 else self.size)]
        self.data = self.data[len(piece) :]
        return piece


def _parsed(data: bytes, size: int, max_string: int = 1 << 20) -> Any:
    """``data`` read through the guard in pieces of ``size`` bytes, kept whole (again with
    the slow parser for an integer past 64 bits, as the readers do)."""
    try:
        return _read_all(data, size, max_string, slow=False)
    except IntegerOverflow:
        return _read_all(data, size, max_string, slow=True)


def _read_all(data: bytes, size: int, max_string: int, slow: bool) -> Any:
    guard = JsonGuard(Pieces(data, size), max_string, "doc", "f")
    events = Events(guard, "doc", "f", slow)
    event, value = events.next()
    kept = project(events, event, value, "keep", Budget(events=10**6, text=10**8))
    events.finish()
    return kept


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.sampled_from('ab"\\\n\t/NaInfty-é\u2028'), max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner,
                                                                max_size=4),
    max_leaves=25,
)  # fmt: skip


@settings(derandomize=True, max_examples=300, deadline=None)
@given(value=json_values, size=st.integers(min_value=1, max_value=40))
def test_the_guard_hands_the_parser_the_same_document_in_any_chunks(value: Any, size: int) -> None:
    """Any JSON (quotes, backslashes, "NaN" and "Infinity" inside strings) read through
    the guard in chunks of 1 to 40 bytes parses to what json.loads gives."""
    data = json.dumps(value).encode()
    assert _parsed(data, size) == json.loads(data)


def test_nan_and_infinity_outside_strings_become_strings_at_any_boundary() -> None:
    """Python's NaN, Infinity and -Infinity (which Inspect writes) read as the strings
    "NaN", "Infinity", "-Infinity", split anywhere; the same words in strings stay."""
    data = b'{"a": NaN, "b": [Infinity, -Infinity], "c": "NaN Infinity \\"NaN\\"", "d": 1}'
    expected = {"a": "NaN", "b": ["Infinity", "-Infinity"], "c": 'NaN Infinity "NaN"', "d": 1}
    for size in range(1, len(data) + 1):
        assert _parsed(data, size) == expected, size


def test_a_long_run_without_a_string_boundary_is_refused() -> None:
    """A string (and a number) longer than the bound is refused naming it, also when it is
    made of escaped quotes and backslashes; one at the bound is read."""
    for body in (b'"' + b"x" * 5000 + b'"', b'"' + b'\\"\\\\' * 1300 + b'"', b"1" * 5000):
        with pytest.raises(InvalidInput, match=r"longer than 4 KiB, the bound \(--max-string\)"):
            _parsed(b'{"a": ' + body + b"}", 512, max_string=4096)
    assert _parsed(b'{"a": "' + b"x" * 4000 + b'"}', 512, max_string=4096) == {"a": "x" * 4000}


def _zip(path: Path, members: list[tuple[str, bytes]], method: int = 8, **lie: int) -> Path:
    packed = []
    for name, data in members:
        if method == ZSTD:
            body = zstandard.ZstdCompressor().compress(data)
        else:
            deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
            body = deflate.compress(data) + deflate.flush()
        size = lie.get("size", len(data)) if name.startswith("samples/") else len(data)
        crc = lie.get("crc", zlib.crc32(data)) if name.startswith("samples/") else zlib.crc32(data)
        packed.append((name, body, crc, size, method))
    return zip_file(path, packed)


def _sample(sample_id: int, extra: str = "") -> bytes:
    return (f'{{"id": {sample_id}, "epoch": 1, "scores": {{"m": {{"value": "C"}}}}'
            f"{extra}}}").encode()  # fmt: skip


def _read(path: Path, **bounds: int) -> list[Item]:
    return list(read_inspect_log(path, InspectOptions(), ImportBounds(**bounds)))


def _refusal(items: list[Item]) -> str:
    assert items[-1].request is None
    assert items[-1].error is not None
    return items[-1].error


def test_the_zip_bounds_name_the_member_and_the_bound(tmp_path: Path) -> None:
    """Too many members; a zstd member declaring 64 MiB from a few hundred bytes; one whose
    header declares 1,000 bytes; one whose CRC-32 differs: each refused in one line."""
    many = [("header.json", HEADER)]
    many += [(f"samples/{i}_epoch_1.json", _sample(i)) for i in range(12)]
    assert "has 13 members, over the bound of 10 (--max-members)" in _refusal(
        _read(_zip(tmp_path / "many.eval", many), max_members=10)
    )
    assert len(_read(tmp_path / "many.eval", max_members=13)) == 12
    zeros = _sample(1, ', "x": "' + "0" * (64 << 20) + '"')
    bomb = [("header.json", HEADER), ("samples/1_epoch_1.json", zeros)]
    error = _refusal(_read(_zip(tmp_path / "bomb.eval", bomb, ZSTD)))
    assert "member samples/1_epoch_1.json declares 67,108,9" in error
    assert "over the bound of 200 (--max-ratio)" in error
    error = _refusal(_read(_zip(tmp_path / "lying.eval", bomb, ZSTD, size=1000)))
    assert "member samples/1_epoch_1.json holds more than the 1,000 bytes its header" in error
    damaged = [("header.json", HEADER), ("samples/1_epoch_1.json", _sample(1))]
    error = _refusal(_read(_zip(tmp_path / "crc.eval", damaged, crc=12345)))
    assert error.startswith("file: cannot be read as an Inspect log: member"
                            " samples/1_epoch_1.json is damaged (its CRC-32 differs)")  # fmt: skip


def test_deep_nesting_and_long_strings_in_a_member_are_refused(tmp_path: Path) -> None:
    """A sample nesting 5,000 deep, and one holding a 2 MiB string with --max-string 1MiB,
    are refused naming the member; the samples before them are read."""
    deep = _sample(2, ', "input": ' + "[" * 5000 + "]" * 5000)
    members = [("header.json", HEADER), ("samples/1_epoch_1.json", _sample(1)),
               ("samples/2_epoch_1.json", deep)]  # fmt: skip
    items = _read(_zip(tmp_path / "deep.eval", members))
    assert items[0].request is not None
    assert "member samples/2_epoch_1.json nests deeper than 1000 levels" in _refusal(items)
    noise = random.Random(1).randbytes(1 << 20).hex()  # 2 MiB that compress 2 to 1
    text = _sample(1, f', "input": "{noise}"')
    long = [("header.json", HEADER), ("samples/1_epoch_1.json", text)]
    error = _refusal(_read(_zip(tmp_path / "long.eval", long), max_string=1 << 20))
    assert "member samples/1_epoch_1.json holds a string or number longer than 1 MiB" in error


def test_a_nan_score_and_an_infinite_working_time_are_refused_by_the_rules(
    tmp_path: Path,
) -> None:
    """Inspect writes NaN and Infinity as Python does: a NaN score is refused naming the
    scorer and value, an infinite working time naming the duration; the header's NaN
    does not stop the log."""
    log = write_log(
        tmp_path / "nan.eval",
        [sample(1, 1, {"m": math.nan}), sample(2, 1, {"m": "C"}, working_time=math.inf),
         sample(3, 1, {"m": "C"})],
    )  # fmt: skip
    items = _read(log)
    assert items[0].error == (
        "scores.m.value: is not C, P, I, N, a boolean, or a finite number ('NaN')"
    )
    assert items[1].error is not None
    assert items[1].error.startswith("duration_ms: ")
    assert items[2].request is not None


def test_the_size_options_are_checked_and_apply(tmp_path: Path) -> None:
    """--max-line 200 refuses a 300-byte line naming its number and imports the others; a
    size that is not one is refused in one line naming the option (exit 1)."""
    path = tmp_path / "h.jsonl"
    line = {"agent_id": "a1", "contract_id": "c1", "score": 7, "output": "x" * 230}
    path.write_text(json.dumps({**line, "output": "short"}) + "\n" + json.dumps(line) + "\n")
    result = runner.invoke(app, ["import", str(path), "--db", str(tmp_path / "x.db"), "--json",
                                 "--max-line", "200"])  # fmt: skip
    summary = json.loads(result.stdout)
    assert (summary["imported"], summary["refused"]) == (1, 1)
    assert summary["problems"][0]["where"] == f"{path}:2"
    size = len(json.dumps(line))
    assert summary["problems"][0]["error"] == (
        f"line: longer than 200 bytes, the bound (--max-line) ({size} bytes)"
    )
    bad = runner.invoke(app, ["import", str(path), "--db", str(tmp_path / "x.db"),
                              "--max-member", "12XB"])  # fmt: skip
    assert bad.exit_code == 1
    assert bad.output.strip().splitlines() == [
        "error: --max-member: must be a size: bytes, or a number with KiB, MiB or GiB"
        " (512MiB) ('12XB')"
    ]


def test_picked_keeps_the_first_it_picks_and_the_last_it_follows_in_order() -> None:
    """``Picked``: the first ``most`` elements ``pick`` accepts and the last
    ``latest_most`` that ``latest`` accepts, in the array's order, the others skipped;
    only those kept count in the budget."""
    rows = [{"n": n, "bad": n in (2, 5)} for n in range(1, 41)]
    data = json.dumps({"rows": rows}).encode()
    shape = {"rows": Picked({"n": KEEP, "bad": KEEP}, lambda r: r["bad"], most=1,
                            latest=lambda r: not r["bad"], latest_most=3)}  # fmt: skip
    events = Events(JsonGuard(io.BytesIO(data), 1 << 20, "doc", "f"), "doc", "f", False)
    budget = Budget()
    event, value = events.next()
    kept = project(events, event, value, shape, budget)
    assert [row["n"] for row in kept["rows"]] == [2, 38, 39, 40]
    assert budget.events == 10_000 - 4 * 2  # 4 rows of 2 values kept, none of the others
