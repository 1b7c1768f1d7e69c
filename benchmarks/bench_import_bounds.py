"""`agentladder import` of hostile and of large ordinary files: for each, what the import
did, its peak resident memory (``ru_maxrss`` of the import process alone, from outside),
the most descriptors it held (``/proc/PID/fd``, sampled every 10 ms) and its wall time.

The hostile files (``tests/importing/bombs.py``): a ``.eval`` of about 1 MB holding 1 GiB
of JSON (deflate), the same with a header declaring 1,000 bytes, a zstd member of 1 GiB,
a JSONL file of one 300 MB line, a ``.json`` log holding a 300 MB string, a sample nested
10,000,000 deep, a ``.eval`` of 100,000 tiny samples. The ordinary ones: 3,000 samples of
ten exchanges each, as ``.eval`` (zstd, as Inspect writes) and ``.json``, written by
inspect_ai. The zstd member again with ``--max-member 2GiB --max-ratio 1000000000``: only
the string bound is left to hold it. Target: every import under 300 MB (docs/import.md, "Bounds").

The command under test is whichever ``agentladder`` ``PYTHONPATH`` gives the child: run
``PYTHONPATH=/path/to/an/older/src .venv/bin/python -m benchmarks import_bounds`` to
measure another version on the same files (docs/reliability.md has both).

Run: ``.venv/bin/python -m benchmarks import_bounds`` (about two minutes; more for a
version without the bounds).
"""

from __future__ import annotations

import json
import os
import random
import tempfile
import zipfile
import zlib
from pathlib import Path

import zstandard
from inspect_ai.log import EvalSample
from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ModelUsage
from inspect_ai.scorer import Score

from tests.importing.bombs import eval_bomb, long_line, zip_file
from tests.importing.helpers import run_measured
from tests.importing.logs import sample, write_log

GIB = 1 << 30
TARGET_MB = 300
ORDINARY = 3000
WORDS = ("alpha", "beta", "gamma", "delta", "query", "select", "table", "index", "agent")


def _header(folder: Path) -> bytes:
    small = write_log(folder / "small.eval", [sample(1, 1, {"m": "C"})])
    with zipfile.ZipFile(small) as log:
        return log.read("header.json")


def _zstd_bomb(path: Path, header: bytes) -> Path:
    body = b'{"id": 1, "epoch": 1, "input": "' + b"x" * GIB + b'", "target": ""}'
    data = zstandard.ZstdCompressor().compress(body)
    packed = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = packed.compress(header) + packed.flush()
    members = [("header.json", head, zlib.crc32(header), len(header), 8),
               ("samples/1_epoch_1.json", data, zlib.crc32(body), len(body), 93)]  # fmt: skip
    return zip_file(path, members)


def _string_log(path: Path, folder: Path) -> Path:
    text = write_log(folder / "plain.json", [sample(1, 1, {"m": "C"})]).read_text()
    at = text.index('"input": "question"') + len('"input": "')
    with path.open("w") as out:
        out.write(text[:at])
        for _ in range(300):
            out.write("x" * 1_000_000)
        out.write(text[at + len("question") :])
    return path


def _deep(path: Path, header: bytes) -> Path:
    """A sample nesting 10,000,000 arrays, random whitespace between the brackets so that
    it compresses only about 4 to 1 (within the ratio bound)."""
    depth = 10_000_000
    rng = random.Random(2)
    spaces = bytes(rng.choice(b" \t\n\r") for _ in range(depth))
    opening = b"".join(b"[" + spaces[i : i + 1] for i in range(depth))
    body = b'{"id": 1, "epoch": 1, "input": ' + opening + b"]" * depth + b"}"
    packed = zlib.compressobj(9, zlib.DEFLATED, -15)
    data = packed.compress(body) + packed.flush()
    head = zlib.compressobj(9, zlib.DEFLATED, -15)
    packed_header = head.compress(header) + head.flush()
    members = [("header.json", packed_header, zlib.crc32(header), len(header), 8),
               ("samples/1_epoch_1.json", data, zlib.crc32(body), len(body), 8)]  # fmt: skip
    return zip_file(path, members)


def _many(path: Path, header: bytes) -> Path:
    with zipfile.ZipFile(path, "w") as log:
        log.writestr("header.json", header)
        for i in range(99_999):
            log.writestr(f"samples/{i}_epoch_1.json",
                         json.dumps({"id": i, "epoch": 1, "input": "q", "target": "a",
                                     "scores": {"m": {"value": "C"}}}))  # fmt: skip
    return path


def _ordinary(folder: Path) -> tuple[Path, Path]:
    """The same ``ORDINARY`` samples as a ``.eval`` and as a ``.json`` log."""
    rng = random.Random(1)

    def text(words: int) -> str:
        return " ".join(rng.choice(WORDS) + str(rng.randrange(1000)) for _ in range(words))

    samples = []
    for i in range(ORDINARY):
        messages: list[ChatMessageUser | ChatMessageAssistant] = []
        for _ in range(10):
            messages.append(ChatMessageUser(content=text(150)))
            messages.append(ChatMessageAssistant(content=text(250)))
        samples.append(EvalSample(
            id=i, epoch=1, input=text(50), target="x", messages=messages,
            scores={"m": Score(value=rng.choice("CI"))}, working_time=1.5,
            model_usage={"openai/gpt-4o-mini": ModelUsage(input_tokens=1000, output_tokens=500,
                                                          total_tokens=1500)},
        ))  # fmt: skip
    as_eval = write_log(folder / "ordinary.eval", samples)
    return as_eval, write_log(folder / "ordinary.json", samples)


def _outcome(out: str, code: int, err: str) -> tuple[str, str]:
    """A short outcome, and the first problem in full."""
    try:
        summary = json.loads(out)
    except ValueError:
        return f"exit {code}", err.strip()[-200:]
    short = f"imported {summary['imported']:,}, refused {summary['refused']:,}"
    problems = summary["problems"]
    return short, problems[0]["error"][:220] if problems else ""


def main() -> None:
    """Make the files, import each into a fresh SQLite file, print one line each."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        header = _header(folder)
        ordinary_eval, ordinary_json = _ordinary(folder)
        cases = {
            "1 GiB of JSON in a 1 MB .eval (deflate)": eval_bomb(folder / "b.eval", header, GIB),
            "the same, header declaring 1,000 bytes": eval_bomb(
                folder / "l.eval", header, GIB, declared=1000
            ),
            "1 GiB in a zstd member": _zstd_bomb(folder / "z.eval", header),
            "the same, size and ratio bounds lifted": folder / "z.eval",
            "a JSONL line of 300 MB": long_line(folder / "long.jsonl", 300_000_000),
            "a 300 MB string in a .json log": _string_log(folder / "string.json", folder),
            "a sample nested 10,000,000 deep": _deep(folder / "deep.eval", header),
            "100,000 tiny samples (.eval)": _many(folder / "many.eval", header),
            f"{ORDINARY:,} ordinary samples (.eval, zstd)": ordinary_eval,
            f"{ORDINARY:,} ordinary samples (.json)": ordinary_json,
        }
        print(f"{'file':44} {'size':>9} {'outcome':28} {'peak MB':>8} {'fds':>4} {'s':>6}")
        lifted = ["--max-member", "2GiB", "--max-ratio", "1000000000"]
        for number, (label, path) in enumerate(cases.items()):
            db = folder / f"x-{number}.db"
            options = lifted if "lifted" in label else []
            done = run_measured(["import", str(path), "--db", str(db), "--json", *options],
                                timeout=900, env=dict(os.environ))  # fmt: skip
            short, problem = _outcome(done.out, done.code, done.err)
            verdict = "" if done.peak_mb < TARGET_MB else "  over the target"
            size = path.stat().st_size / 1e6
            print(f"{label:44} {size:>7.1f}MB {short:28} {done.peak_mb:>8.0f}"
                  f" {done.fds:>4} {done.seconds:>6.1f}{verdict}")  # fmt: skip
            if problem:
                print(f"    {problem}")


if __name__ == "__main__":
    main()
