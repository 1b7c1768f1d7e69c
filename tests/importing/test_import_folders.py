"""What `agentladder import` reads from folders: every log below them (subfolders too),
an Inspect eval set's folder as inspect_ai's own `eval_set` writes it (its manifests
noted, not imported), and nothing silent: each file or folder that yields nothing is
one line naming it and why, exit 1, the rest imported; a log that cannot be read to
its end is refused whole."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentladder.cli import app
from agentladder.errors import shown_value
from agentladder.importing.report import FITTED
from tests.importing.logs import sample, write_log

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


def _import(*args: str) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, ["import", *args, "--json"])
    assert result.stdout.strip(), result.output
    return result.exit_code, json.loads(result.stdout)


def _keys(db: Path) -> list[str]:
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT key FROM oracle_events ORDER BY key").fetchall()
    conn.close()
    return [key for (key,) in rows]


@pytest.fixture(scope="module")
def eval_set_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder written by inspect_ai's eval_set (two tasks x two mockllm models)."""
    folder = tmp_path_factory.mktemp("evalset") / "set"
    ran = subprocess.run(
        [sys.executable, "-m", "tests.importing.tiny_eval_set", str(folder)],
        cwd=ROOT, capture_output=True, text=True, check=False, timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-2000:]
    return folder


def _line(text: str) -> str:
    line = json.dumps({"agent_id": "jsonl-agent", "contract_id": text, "score": 8})
    return line + "\n"


def test_an_eval_set_folder_below_another_imports_every_log(
    eval_set_folder: Path, tmp_path: Path
) -> None:
    """A folder holding the eval set's folder and a subfolder of JSONL: every log below it
    is imported (4 logs x 2 samples, 2 lines); the manifests are one note naming the set,
    logs.json's 4 logs all found; exit 0; again: every item a duplicate."""
    top = tmp_path / "history"
    shutil.copytree(eval_set_folder, top / "runs" / "set-1")
    names = sorted(p.name for p in (top / "runs" / "set-1").iterdir())
    assert {"logs.json", "eval-set.json", ".eval-set-id"} <= set(names)
    assert len([n for n in names if n.endswith(".eval")]) == 4
    (top / "notes" / "deep").mkdir(parents=True)
    (top / "notes" / "deep" / "more.jsonl").write_text(_line("c1") + _line("c2"))
    db = tmp_path / "x.db"
    code, summary = _import(str(top), "--db", str(db))
    assert code == 0, summary
    assert (summary["imported"], summary["refused"]) == (10, 0), summary
    assert summary["notes"] == [
        f"{top / 'runs' / 'set-1'}: an Inspect eval set (.eval-set-id, eval-set.json,"
        " logs.json): its manifests are not imported; logs.json lists 4 logs, 4 here",
        FITTED,
    ]
    agents = {key.split(":")[0] for key in _keys(db)}
    assert len(_keys(db)) == 10
    assert agents == {"judgment"}
    code, again = _import(str(top), "--db", str(db))
    assert (code, again["imported"], again["duplicate"]) == (0, 0, 10)
    text = runner.invoke(app, ["import", str(top), "--db", str(db)])
    assert text.exit_code == 0
    assert "logs.json lists 4 logs, 4 here" in text.stdout
    assert ": refused: " not in text.stderr


def test_a_log_the_eval_set_lists_but_lacks_is_one_refused_line(
    eval_set_folder: Path, tmp_path: Path
) -> None:
    """One log of the set removed: the other three are imported, logs.json is one refused
    line naming the missing log, exit 1."""
    folder = tmp_path / "set"
    shutil.copytree(eval_set_folder, folder)
    gone = sorted(folder.glob("*.eval"))[0]
    gone.unlink()
    code, summary = _import(str(folder), "--db", str(tmp_path / "x.db"))
    assert code == 1
    assert (summary["imported"], summary["refused"]) == (6, 1)
    (problem,) = summary["problems"]
    assert problem["where"] == str(folder / "logs.json")
    assert problem["error"].startswith(f"logs: lists 1 logs not in its folder: {gone.name}")
    assert summary["notes"][0].endswith("logs.json lists 4 logs, 3 here")


def test_each_file_that_yields_nothing_is_one_line_and_exit_1(tmp_path: Path) -> None:
    """An empty JSONL file, one of blank lines, a log without samples, a .json that is no
    log and a file of another suffix: each one refused line naming it and why (the other
    suffix: one note); the good files below are imported all the same; exit 1."""
    top = tmp_path / "logs"
    (top / "sub").mkdir(parents=True)
    (top / "empty.jsonl").write_text("")
    (top / "blank.jsonl").write_text("\n  \n")
    write_log(top / "nosamples.eval", [])
    (top / "broken.json").write_text("{not json")
    (top / "README.md").write_text("notes")
    (top / "sub" / "good.jsonl").write_text(_line("g1"))
    write_log(top / "sub" / "good.eval", [sample(1, 1, {"match": "C"})])
    db = tmp_path / "x.db"
    result = runner.invoke(app, ["import", str(top), "--db", str(db)])
    assert result.exit_code == 1, result.output
    assert "imported 2, duplicate 0, conflicting 0, refused 4" in result.stdout
    lines = result.stderr.strip().splitlines()
    problems = [line for line in lines if ": refused: " in line]
    problems[1] = problems[1].split(" (lexical error")[0]  # the parser's own words follow
    blank, broken, empty, nosamples = (
        top / name for name in ("blank.jsonl", "broken.json", "empty.jsonl", "nosamples.eval")
    )
    assert problems == [
        f"{blank}: refused: file: holds no judgment: it is empty or every line is blank"
        f" ({shown_value(str(blank))})",
        f"{broken}: refused: file: cannot be read as an Inspect log: the log is not JSON",
        f"{empty}: refused: file: holds no judgment: it is empty or every line is blank"
        f" ({shown_value(str(empty))})",
        f"{nosamples}: refused: file: the log holds no samples (its run ended before any"
        f" sample did, or it was run without logging samples) ({shown_value(str(nosamples))})",
    ]
    assert f"{top}: left out 1 that are not .jsonl, .eval or .json files: README.md" in (
        result.stdout.splitlines()
    )
    assert len(_keys(db)) == 2


def test_a_folder_with_nothing_to_read_and_a_file_of_no_known_suffix(tmp_path: Path) -> None:
    """A folder of other files only, and a file given by name whose suffix says no format:
    each one refused line; a good file beside them imported; exit 1. With --format the
    file is read as that format."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("x")
    odd = tmp_path / "results.txt"
    odd.write_text(_line("t1"))
    good = tmp_path / "good.jsonl"
    good.write_text(_line("g1"))
    db = tmp_path / "x.db"
    code, summary = _import(str(folder), str(odd), str(good), "--db", str(db))
    assert code == 1
    assert (summary["imported"], summary["refused"]) == (1, 2)
    assert [(p["where"], p["error"]) for p in summary["problems"]] == [
        (str(folder), f"folder: holds no .jsonl, .eval or .json file ({shown_value(str(folder))})"),
        (str(odd), "file: is not a .jsonl, .eval or .json file; give --format jsonl or"
         f" inspect ({shown_value(str(odd))})"),
    ]  # fmt: skip
    assert summary["notes"] == [
        f"{folder}: left out 1 that are not .jsonl, .eval or .json files: a.txt",
        FITTED,
    ]
    code, summary = _import(str(odd), "--format", "jsonl", "--db", str(db))
    assert (code, summary["imported"]) == (0, 1)


def test_a_log_that_cannot_be_read_to_its_end_is_refused_whole(tmp_path: Path) -> None:
    """A .eval log whose last sample's bytes are damaged: the log is one refused line and
    none of its samples is stored (read whole in the first pass, before any is applied),
    whether or not --scale spares the pass its scales."""
    log = write_log(tmp_path / "run.eval", [sample(i, 1, {"match": "C"}) for i in (1, 2, 3)])
    with zipfile.ZipFile(log) as archive:
        info = archive.getinfo("samples/3_epoch_1.json")
    data = bytearray(log.read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    for at in range(start + 10, start + info.compress_size - 2):
        data[at] ^= 0x5A
    log.write_bytes(bytes(data))
    db = tmp_path / "x.db"
    for extra in ((), ("--scale", "0-10")):
        code, summary = _import(str(log), "--db", str(db), *extra)
        assert code == 1
        assert (summary["imported"], summary["refused"]) == (0, 1)
        (problem,) = summary["problems"]
        assert problem["where"] == str(log)
        assert problem["error"].startswith("file: cannot be read as an Inspect log: member")
        assert "samples/3_epoch_1.json" in problem["error"]
    assert not db.exists() or _keys(db) == []


def test_manifests_given_by_name_are_noted_not_imported(
    eval_set_folder: Path, tmp_path: Path
) -> None:
    """logs.json given as a path is not read as a log: one note, nothing refused."""
    code, summary = _import(str(eval_set_folder / "logs.json"), "--db", str(tmp_path / "x.db"))
    assert (code, summary["refused"], summary["imported"]) == (0, 0, 0)
    assert summary["notes"] == [
        f"{eval_set_folder / 'logs.json'}: an Inspect eval set's manifest: not imported"
    ]
