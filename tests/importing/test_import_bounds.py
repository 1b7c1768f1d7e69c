"""`agentladder import` reads within bounds whatever its files hold: a decompression bomb,
a zip whose header lies, a 300 MB line, a 300 MB string are each refused in one line
naming the file (the member, the line) and the bound, while the import process, measured
from outside (its own ``ru_maxrss``), stays under 300 MB; the bounds are options."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.importing.bombs import eval_bomb, long_line
from tests.importing.helpers import run_measured
from tests.importing.logs import sample, write_log

MEMORY_MB = 300
GIB = 1 << 30


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A real log's header, and the bombs made with it: 1 GiB of JSON in about 1 MB,
    honest and with a header declaring 1,000 bytes."""
    folder = tmp_path_factory.mktemp("bombs")
    small = write_log(folder / "small.eval", [sample(1, 1, {"m": "C"})])
    with zipfile.ZipFile(small) as log:
        header = log.read("header.json")
    return {
        "bomb": eval_bomb(folder / "bomb.eval", header, GIB),
        "lying": eval_bomb(folder / "lying.eval", header, GIB, declared=1000),
    }


def _import(*args: str) -> tuple[int, dict[str, Any], str, float]:
    done = run_measured(["import", *args, "--json"])
    assert done.out.strip(), done.err
    return done.code, json.loads(done.out), done.err, done.peak_mb


@pytest.mark.parametrize(
    ("name", "options", "says"),
    [
        ("bomb", [], "declares 1,056,964,689 bytes decompressed, over the bound of 512 MiB"
                     " (--max-member)"),
        ("bomb", ["--max-member", "2GiB"], "over the bound of 200 (--max-ratio)"),
        ("lying", [], "holds more than the 1,000 bytes its header declares"),
    ],
)  # fmt: skip
def test_a_decompression_bomb_is_refused_naming_member_and_bound_within_memory(
    logs: dict[str, Path], tmp_path: Path, name: str, options: list[str], says: str
) -> None:
    """A 1 MB .eval holding 1 GiB of JSON: refused by its declared size, by its ratio when
    the size bound is raised, and by its real size when its header declares 1,000 bytes;
    one refused item naming the file and the member, nothing imported, under 300 MB."""
    code, summary, _, peak = _import(str(logs[name]), "--db", str(tmp_path / "x.db"), *options)
    assert code == 1
    assert (summary["imported"], summary["refused"]) == (0, 1)
    (problem,) = summary["problems"]
    assert problem["where"] == str(logs[name])
    assert problem["error"].startswith("file: cannot be read as an Inspect log: member"
                                       " samples/1_epoch_1.json ")  # fmt: skip
    assert says in problem["error"]
    assert peak < MEMORY_MB, f"{peak:.0f} MB"


def test_a_300_mb_line_is_refused_by_number_and_the_other_lines_imported(tmp_path: Path) -> None:
    """A 300 MB line between two judgments: refused naming line 2 and the bound (1 MiB),
    read past in pieces; lines 1 and 3 imported; under 300 MB."""
    first = {"agent_id": "a1", "contract_id": "c0", "score": 7}
    after = json.dumps({**first, "contract_id": "c2"})
    path = long_line(tmp_path / "history.jsonl", 300_000_000, json.dumps(first), after)
    code, summary, _, peak = _import(str(path), "--db", str(tmp_path / "x.db"))
    assert code == 1
    assert (summary["imported"], summary["refused"]) == (2, 1)
    (problem,) = summary["problems"]
    assert problem["where"] == f"{path}:2"
    assert problem["error"] == (
        "line: longer than 1 MiB, the bound (--max-line) (300,000,000 bytes)"
    )
    assert peak < MEMORY_MB, f"{peak:.0f} MB"


def test_a_300_mb_string_in_a_json_log_is_refused_within_memory(tmp_path: Path) -> None:
    """A .json log whose sample holds a 300 MB input: refused naming the bound
    (--max-string), under 300 MB; with --max-string 512MiB it is read (and the memory is
    the user's choice)."""
    log = write_log(tmp_path / "run.json", [sample(1, 1, {"m": "C"})])
    text = log.read_text()
    at = text.index('"input": "question"') + len('"input": "')
    with (tmp_path / "big.json").open("w") as out:
        out.write(text[:at])
        for _ in range(300):
            out.write("x" * 1_000_000)
        out.write(text[at + len("question") :])
    code, summary, _, peak = _import(str(tmp_path / "big.json"), "--db", str(tmp_path / "x.db"))
    assert code == 1
    (problem,) = summary["problems"]
    assert problem["error"].startswith("file: cannot be read as an Inspect log: the log holds"
                                       " a string or number longer than 32 MiB, the bound"
                                       " (--max-string)")  # fmt: skip
    assert peak < MEMORY_MB, f"{peak:.0f} MB"
