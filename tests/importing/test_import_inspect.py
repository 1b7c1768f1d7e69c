"""`agentladder import` of Inspect AI logs (.eval and .json, written by inspect_ai): the
documented mapping of model, task, sample x epoch, score, duration and cost."""

from __future__ import annotations

import json
import sqlite3
import zipfile
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import read_eval_log
from typer.testing import CliRunner

from agentladder.cli import app
from tests.importing.logs import sample, write_log

runner = CliRunner()


def _import(*args: str) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, ["import", *args, "--json"])
    assert result.stdout.strip(), result.output
    return result.exit_code, json.loads(result.stdout)


def _events(db: Path) -> dict[str, dict[str, Any]]:
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT agent_id, key, payload FROM oracle_events ORDER BY key").fetchall()
    conn.close()
    return {key: {"agent": agent, **json.loads(payload)} for agent, key, payload in rows}


@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_each_sample_epoch_is_one_judgment_by_the_rules(tmp_path: Path, suffix: str) -> None:
    """C/I/P and numbers (one scorer's numbers on one scale: 0.75 and 7 make it 0-10), an
    errored sample skipped (and with --include-errors failed, 0), working time as
    duration, the contract id from eval id, sample id and epoch; a re-import adds
    nothing."""
    log = write_log(
        tmp_path / f"run{suffix}",
        [
            sample(1, 1, {"match": "C"}),
            sample(1, 2, {"match": "I"}),
            sample("q-2", 1, {"match": "P"}),
            sample(3, 1, {"match": 0.75}),
            sample(4, 1, {"match": 7}),
            sample(5, 1, error="the sandbox died", working_time=0.5),
        ],
    )
    db = tmp_path / "x.db"
    code, summary = _import(str(log), "--db", str(db))
    assert code == 0, summary
    assert (summary["imported"], summary["duplicate"], summary["refused"]) == (5, 0, 0)
    assert summary["skipped"] == {"sample_error": 1}
    assert summary["skips"] == [
        {"where": f"{log}#5/1", "reason": "sample_error", "error": "the sandbox died"}
    ]
    assert "judgment:inspect:evalAbc123:5:1" not in _events(db)
    code, summary = _import(str(log), "--db", str(db), "--include-errors")
    assert code == 0, summary
    assert (summary["imported"], summary["duplicate"], summary["skipped"]) == (1, 5, {})
    events = _events(db)
    assert set(events) == {
        "judgment:inspect:evalAbc123:1:1", "judgment:inspect:evalAbc123:1:2",
        "judgment:inspect:evalAbc123:q-2:1", "judgment:inspect:evalAbc123:3:1",
        "judgment:inspect:evalAbc123:4:1", "judgment:inspect:evalAbc123:5:1",
    }  # fmt: skip
    got = {k.split(":", 3)[3]: (e["score"], e["success"]) for k, e in events.items()}
    assert got == {
        "1:1": (10.0, True), "1:2": (0.0, False), "q-2:1": (5.0, True),
        "3:1": (0.75, False), "4:1": (7.0, True), "5:1": (0.0, False),
    }  # fmt: skip
    first = events["judgment:inspect:evalAbc123:1:1"]
    assert first["agent"] == "openai-gpt-4o-mini"
    assert first["task_type"] == "math-gsm8k"
    assert first["duration_ms"] == 2500.0
    assert first["model"] == "openai/gpt-4o-mini"
    assert first["cost"] == 0.0  # no prices configured, none recorded
    assert events["judgment:inspect:evalAbc123:5:1"]["duration_ms"] == 500.0
    code, again = _import(str(log), "--db", str(db), "--include-errors")
    assert code == 0
    assert (again["imported"], again["duplicate"]) == (0, 6)
    code, again = _import(str(log), "--db", str(db))  # skipped again, stored all the same
    assert (code, again["imported"], again["duplicate"], again["skipped"]) == (
        0, 0, 5, {"sample_error": 1},
    )  # fmt: skip
    assert len(_events(db)) == 6


def test_agent_mapping_prices_and_the_scorer_option(tmp_path: Path) -> None:
    """--agent maps the model, the configured prices give the cost, --task-type names the
    type, and a log with two scorers needs --scorer (else each sample is refused)."""
    config = tmp_path / "c.yaml"
    config.write_text(
        "agents:\n  - name: mini\n    input_price_per_mtok: 2.0\n    output_price_per_mtok: 8.0\n"
    )
    log = write_log(
        tmp_path / "two.eval",
        [sample(1, 1, {"exact": "C", "judge": 3}), sample(2, 1, {"exact": "I", "judge": 9})],
    )
    db = tmp_path / "x.db"
    common = ["--db", str(db), "--config", str(config), "--agent", "openai/gpt-4o-mini=mini"]
    code, refused = _import(str(log), *common)
    assert code == 1
    assert refused["refused"] == 2
    assert refused["problems"][0]["where"].endswith("two.eval#1/1")
    assert refused["problems"][0]["error"].startswith("scores: several scorers")
    assert _events(db) == {}
    code, summary = _import(str(log), *common, "--scorer", "judge", "--task-type", "qa")
    assert code == 0, summary
    events = _events(db)
    assert {e["agent"] for e in events.values()} == {"mini"}
    assert {e["task_type"] for e in events.values()} == {"qa"}
    # the judge's 3 and 9 on the scale its values make, 1-10: 1 is the worst
    assert sorted(e["score"] for e in events.values()) == pytest.approx([20 / 9, 80 / 9])
    # 1000 input and 500 output tokens at 2 and 8 per million
    assert [e["cost"] for e in events.values()] == pytest.approx([0.006, 0.006])


def test_unmappable_values_are_refused_with_field_and_value(tmp_path: Path) -> None:
    """A value outside the scale given (--scale), an unknown --scorer, a sample without
    score, a file that is no log: each refused naming field and value; the good sample is
    imported. Without --scale, 42 makes the scorer's scale 0-100."""
    log = write_log(
        tmp_path / "odd.json",
        [sample(1, 1, {"m": 42}), sample(2, 1, {"m": "C"}), sample(3, 1, None)],
    )
    broken = tmp_path / "broken.eval"
    broken.write_bytes(b"not a zip")
    db = tmp_path / "x.db"
    code, summary = _import(str(log), str(broken), "--db", str(db), "--scale", "0-10")
    assert code == 1
    assert (summary["imported"], summary["refused"]) == (1, 3)
    errors = [p["error"] for p in summary["problems"]]
    assert errors[0] == "scores.m.value: is outside the scale 0-10 (42)"
    assert errors[1].startswith("scores: the sample has no score")
    assert errors[2].startswith("file: cannot be read as an Inspect log")
    code, other = _import(str(log), "--db", str(db), "--scorer", "nope")
    assert other["problems"][0]["error"].startswith("scores: no scorer 'nope'")
    code, detected = _import(str(log), "--db", str(tmp_path / "y.db"))
    assert (detected["imported"], detected["refused"]) == (2, 1)
    assert sorted(e["score"] for e in _events(tmp_path / "y.db").values()) == [4.2, 10.0]


def _as_older(log: Path) -> Path:
    """The log as Inspect wrote it before logs had an eval id (no ``eval.eval_id``)."""
    if log.suffix == ".json":
        data = json.loads(log.read_text())
        del data["eval"]["eval_id"]
        log.write_text(json.dumps(data))
        return log
    older = log.with_name("older.eval")
    with zipfile.ZipFile(log) as source, zipfile.ZipFile(older, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename in ("header.json", "_journal/start.json"):
                header = json.loads(data)
                del header["eval"]["eval_id"]
                data = json.dumps(header).encode()
            target.writestr(info, data)
    return older


@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_a_log_from_before_eval_ids_imports_under_inspects_own_id(
    tmp_path: Path, suffix: str
) -> None:
    """A log written before Inspect logs had an eval id (Inspect before 2025, as in
    Inspect's own test logs) imports, each contract named by the id Inspect's reader
    derives for that log (so either reader gives the same contracts); again: duplicates."""
    log = _as_older(write_log(tmp_path / f"run{suffix}", [sample(1, scores={"s": "C"})]))
    derived = read_eval_log(str(log)).eval.eval_id
    assert len(derived) == 22
    assert derived != "evalAbc123"
    db = tmp_path / "x.db"
    code, summary = _import(str(log), "--db", str(db), "--create")
    assert code == 0, summary
    assert summary["imported"] == 1
    assert list(_events(db)) == [f"judgment:inspect:{derived}:1:1"]
    code, again = _import(str(log), "--db", str(db))
    assert (code, again["imported"], again["duplicate"]) == (0, 0, 1)
