"""Failures that are not the agent's are not counted against it: an Inspect sample the
evaluation marked an error, one whose model call failed (a 429 insufficient_quota, a 401
of the client's key, a gateway's budget refusal) and a JSONL line with an `error` are
skipped with a count and one line of the summary, unless --include-errors; a JSONL line
without `success` succeeds when its score reaches --success-threshold (5 by default)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.event import InfoEvent
from typer.testing import CliRunner

from agentladder.cli import app
from agentladder.importing.report import skipped_line
from tests.importing.logs import sample, write_log

runner = CliRunner()
QUOTA = (
    "Error code: 429 - {'error': {'message': 'You exceeded your current quota, please check"
    " your plan and billing details.', 'type': 'insufficient_quota', 'code':"
    " 'insufficient_quota'}}"
)


def _import(*args: str) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, ["import", *args, "--json"])
    assert result.stdout.strip(), result.output
    return result.exit_code, json.loads(result.stdout)


def _judged(db: Path) -> dict[str, tuple[float | None, bool]]:
    """contract id -> (score, success) of every stored judgment."""
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT payload FROM oracle_events").fetchall()
    conn.close()
    found = [json.loads(payload) for (payload,) in rows]
    return {j["contract_id"]: (j["score"], j["success"]) for j in found}


def test_inspect_samples_that_failed_for_other_reasons_are_skipped(tmp_path: Path) -> None:
    """Of four samples: one scored, one the evaluation marked an error (the gateway
    refused its key), one whose model call failed with 429 insufficient_quota though the
    agent's code went on (scored I), one whose call the gateway refused for its budget:
    one imported, three skipped (two reasons, one line each), exit 0. With
    --include-errors: the error a failure (0), the two others as scored."""
    log = write_log(
        tmp_path / "run.eval",
        [
            sample(1, 1, {"match": "C"}, served="gpt-4o-mini-2024-07-18"),
            sample(2, 1, error="AuthenticationError: Error code: 401 - invalid API key"),
            sample(3, 1, {"match": "I"}, failed_call=QUOTA),
            sample(4, 1, {"match": "C"}, failed_call="Error code: 429 - budget exhausted"),
        ],
    )
    db = tmp_path / "x.db"
    result = runner.invoke(app, ["import", str(log), "--db", str(db)])
    assert result.exit_code == 0, result.output
    out = result.stdout.splitlines()
    assert out[0].startswith("new agents (1): openai-gpt-4o-mini")
    assert out[1].startswith("imported 1, duplicate 0, conflicting 0, refused 0 in ")
    assert out[2] == (
        "1 sample skipped: the evaluation marked it an error; --include-errors to count it"
        " as a failure"
    )
    assert out[3] == skipped_line("model_call", 2)
    assert out[3].startswith("2 samples skipped: a model call of each failed")
    assert skipped_line("sample_error", 3) == (
        "3 samples skipped: the evaluation marked them errors; --include-errors to count them"
        " as failures"
    )
    assert list(_judged(db)) == ["inspect:evalAbc123:1:1"]
    code, summary = _import(str(log), "--db", str(db))
    assert code == 0
    assert summary["skipped"] == {"sample_error": 1, "model_call": 2}
    assert [(s["where"].rsplit("#", 1)[1], s["reason"]) for s in summary["skips"]] == [
        ("2/1", "sample_error"), ("3/1", "model_call"), ("4/1", "model_call"),
    ]  # fmt: skip
    assert summary["skips"][1]["error"] == " ".join(QUOTA.split())
    code, summary = _import(str(log), "--db", str(db), "--include-errors")
    assert code == 0, summary
    assert (summary["imported"], summary["duplicate"], summary["skipped"]) == (3, 1, {})
    assert _judged(db) == {
        "inspect:evalAbc123:1:1": (10.0, True),
        "inspect:evalAbc123:2:1": (0.0, False),
        "inspect:evalAbc123:3:1": (0.0, False),
        "inspect:evalAbc123:4:1": (10.0, True),
    }


def _jsonl(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_jsonl_lines_with_an_error_are_skipped_unless_included(tmp_path: Path) -> None:
    """A line's `error` says the failure was not the agent's: skipped (one summary line),
    or with --include-errors imported as a failure (its score kept); an error beside
    `"success": true` and an error that is not a string are refused, naming the field."""
    history = _jsonl(
        tmp_path / "h.jsonl",
        [
            {"agent_id": "a", "contract_id": "ok", "score": 8},
            {"agent_id": "a", "contract_id": "quota", "error": "429 insufficient_quota"},
            {"agent_id": "a", "contract_id": "key", "score": 2, "error": "401 invalid key"},
            {"agent_id": "a", "contract_id": "odd", "success": True, "error": "404"},
            {"agent_id": "a", "contract_id": "bad", "error": 404},
            {"agent_id": "a", "contract_id": "none", "score": 1, "error": None},
        ],
    )
    db = tmp_path / "x.db"
    result = runner.invoke(app, ["import", str(history), "--db", str(db)])
    assert result.exit_code == 1  # the bad line
    assert skipped_line("line_error", 3) in result.stdout.splitlines()
    assert result.stderr.splitlines()[-1] == (
        f"{history}:5: refused: error: must say why the task failed, a string of 1 to 10,000"
        " characters, or null (404)"
    )
    assert _judged(db) == {"ok": (8.0, True), "none": (1.0, False)}
    code, summary = _import(str(history), "--db", str(db), "--include-errors")
    assert code == 1
    assert (summary["imported"], summary["duplicate"], summary["refused"]) == (2, 2, 2)
    assert [p["error"] for p in summary["problems"]] == [
        "success: is true, but the line has an error (True)",
        "error: must say why the task failed, a string of 1 to 10,000 characters, or null (404)",
    ]
    assert _judged(db)["quota"] == (None, False)
    assert _judged(db)["key"] == (2.0, False)


@pytest.mark.parametrize(
    ("line", "threshold", "success"),
    [
        ({"score": 1}, None, False),  # was true before the rule
        ({"score": 4.99}, None, False),
        ({"score": 5}, None, True),
        ({"score": 60, "scale": "0-100"}, None, True),  # 6 on 0-10
        ({"score": 0.4, "scale": "0-1"}, None, False),  # 4 on 0-10
        ({"score": 6}, "7", False),
        ({"score": 7}, "7", True),
        ({"score": 1, "success": True}, None, True),  # said: kept
        ({"score": 9, "success": False}, None, False),
        ({}, None, True),  # no score: the API's default
    ],
)
def test_success_left_out_follows_the_score(
    tmp_path: Path, line: dict[str, Any], threshold: str | None, success: bool
) -> None:
    """success = score on 0-10 (after its scale) >= --success-threshold (5)."""
    history = _jsonl(tmp_path / "h.jsonl", [{"agent_id": "a", "contract_id": "c1", **line}])
    db = tmp_path / "x.db"
    extra = ["--success-threshold", threshold] if threshold else []
    code, summary = _import(str(history), "--db", str(db), *extra)
    assert (code, summary["imported"]) == (0, 1), summary
    assert _judged(db)["c1"][1] is success


def test_the_threshold_applies_to_inspect_samples_and_is_checked(tmp_path: Path) -> None:
    """--success-threshold 8: a sample scored 7 of 10 failed; a threshold past 10 is one
    line and exit 1, as every bad option value (docs/cli.md)."""
    log = write_log(tmp_path / "run.json", [sample(1, 1, {"m": 7}), sample(2, 1, {"m": 9})])
    db = tmp_path / "x.db"
    code, summary = _import(str(log), "--db", str(db), "--scale", "0-10",
                            "--success-threshold", "8")  # fmt: skip
    assert code == 0, summary
    assert _judged(db) == {"inspect:evalAbc123:1:1": (7.0, False),
                           "inspect:evalAbc123:2:1": (9.0, True)}  # fmt: skip
    bad = runner.invoke(app, ["import", str(log), "--db", str(db), "--success-threshold", "11"])
    assert bad.exit_code == 1
    assert bad.output.strip() == (
        "error: --success-threshold: Input should be less than or equal to 10"
    )


def test_a_sample_of_many_events_is_read_within_its_budget(tmp_path: Path) -> None:
    """12,000 events (past the 10,000 values a sample's kept fields may hold) of which one
    is a failed model call: the events are read one at a time and only the failed call
    counts against the sample's budget, so the sample is skipped for it, not refused."""
    busy = sample(1, 1, {"match": "C"}, failed_call=QUOTA)
    busy.events = [InfoEvent(data=n) for n in range(12_000)] + busy.events
    quiet = sample(2, 1, {"match": "C"})
    quiet.events = [InfoEvent(data=n) for n in range(12_000)]
    log = write_log(tmp_path / "busy.json", [busy, quiet])
    code, summary = _import(str(log), "--db", str(tmp_path / "x.db"))
    assert code == 0, summary
    assert (summary["imported"], summary["refused"], summary["skipped"]) == (
        1, 0, {"model_call": 1},
    )  # fmt: skip
