"""`agentladder import --format langfuse`: saved pages of Langfuse's public API (scores,
traces, observations, score configs; tests/importing/data/langfuse, written by hand in
Langfuse's documented shapes, paged) become judgments with the documented agents, task
types, scales, judges and times, exactly once; what cannot be mapped is refused naming
the file and entry, the field and the value."""

from __future__ import annotations

import json
import shutil
import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentladder.cli import app
from agentladder.importing.bounds import ImportBounds
from agentladder.importing.langfuse import Known, LangfuseOptions, score_item
from agentladder.importing.langfuse_pages import entries_of
from tests.importing.helpers import run_measured

DATA = Path(__file__).parent / "data" / "langfuse"
MAPPED = ["--agent", "gpt-4o-2024-08-06=gpt4o", "--category", "good=9", "--task-type", "support"]
runner = CliRunner()


def _import(*args: str) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, ["import", "--format", "langfuse", *args, "--json"])
    assert result.stdout.strip(), result.output
    return result.exit_code, json.loads(result.stdout)


def _events(db: Path) -> dict[str, dict[str, Any]]:
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT agent_id, key, payload FROM oracle_events").fetchall()
    conn.close()
    return {key.removeprefix("judgment:"): {"agent": a, **json.loads(p)} for a, key, p in rows}


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "export"
    shutil.copytree(DATA, folder)
    return folder


def test_the_saved_pages_import_with_agents_task_types_scales_and_judges(tmp_path: Path) -> None:
    """Nine scores over two pages: the agent from the scored observation's or the trace's
    one model (mapped by --agent, else made an id), the task type from the tag, the
    trace's name, else --task-type; NUMERIC on its config's range (1-5) or its name's scale
    (0.9 and 0.4: 0-1), BOOLEAN 10 or 0, CATEGORICAL by --category; the judge from source
    and author or name; observed_at from the score's timestamp; a second import adds
    nothing."""
    db = tmp_path / "x.db"
    code, summary = _import(str(DATA), "--db", str(db), *MAPPED)
    assert code == 0, summary
    assert (summary["imported"], summary["duplicate"], summary["refused"]) == (9, 0, 0)
    assert summary["new_agents"] == ["gpt4o", "claude-3-5-sonnet-20241022", "mistral-large-latest"]
    assert "langfuse: read 9 scores, 6 traces, 8 observations, 3 score configs" in summary["notes"]
    events = _events(db)
    got = {
        key: (e["agent"], e["task_type"], e["score"], e["success"], e["judge"])
        for key, e in events.items()
    }
    claude = "claude-3-5-sonnet-20241022"
    assert got == {
        "langfuse:t-rev-1:quality": ("gpt4o", "code_review", 7.5, True,
                                     "langfuse:ANNOTATION:user-ana"),
        "langfuse:t-rev-2:quality": (claude, "code_review", 2.5, False,
                                     "langfuse:ANNOTATION:user-ana"),
        "langfuse:t-sql-1/o-sql-1:correct": ("gpt4o", "sql-generation", 10.0, True,
                                             "langfuse:EVAL:correct"),
        "langfuse:t-sql-2/o-sql-2:correct": (claude, "sql-generation", 0.0, False,
                                             "langfuse:EVAL:correct"),
        "langfuse:t-sql-1:helpfulness": ("gpt4o", "sql-generation", 9.0, True,
                                         "langfuse:API:helpfulness"),
        "langfuse:t-sql-2:helpfulness": (claude, "sql-generation", 4.0, False,
                                         "langfuse:API:helpfulness"),
        "langfuse:t-rev-1:tone": ("gpt4o", "code_review", 9.0, True,
                                  "langfuse:ANNOTATION:user-ben"),
        "langfuse:t-multi/o-multi-b:quality": (claude, "compare", 10.0, True,
                                               "langfuse:ANNOTATION:user-ana"),
        "langfuse:t-untitled:helpfulness": ("mistral-large-latest", "support", 7.0, True,
                                            "langfuse:API:helpfulness"),
    }  # fmt: skip
    first = events["langfuse:t-rev-1:quality"]
    assert first["observed_at"] == "2026-11-20T11:00:00Z"
    assert (first["model"], first["cost"], first["duration_ms"]) == (
        "gpt-4o-2024-08-06",
        0.012,
        4200.0,
    )
    scored = events["langfuse:t-sql-1/o-sql-1:correct"]  # the observation's own cost and time
    assert (scored["cost"], scored["duration_ms"]) == (0.004, 1250.0)
    assert summary["model_versions"] == 3
    code, again = _import(str(DATA), "--db", str(db), *MAPPED)
    assert code == 0, again
    assert (again["imported"], again["duplicate"], again["model_versions"]) == (0, 9, 0)
    assert len(_events(db)) == 9


def test_an_unknown_data_type_is_refused_naming_the_file_and_entry(tmp_path: Path) -> None:
    """A score of another dataType (Langfuse's newer TEXT and CORRECTION among them) is
    refused where it is: FILE#N in a JSON page, FILE:LINE for a JSONL line holding one
    score; the other scores are imported, exit 1."""
    folder = _copy(tmp_path)
    base = json.loads((DATA / "scores-page-2.json").read_text())["data"][0]
    page = folder / "scores-page-3.json"
    text = {**base, "id": "s-10", "name": "notes", "dataType": "TEXT", "stringValue": "ok"}
    page.write_text(json.dumps({"data": [{**base, "id": "s-11", "name": "h2"}, text],
                                "meta": {"page": 3, "limit": 5, "totalItems": 11,
                                         "totalPages": 3}}))  # fmt: skip
    lines = folder / "more-scores.jsonl"
    lines.write_text("\n" + json.dumps({**base, "id": "s-12", "dataType": "CORRECTION"}) + "\n")
    code, summary = _import(str(folder), "--db", str(tmp_path / "x.db"), *MAPPED)
    assert code == 1
    assert (summary["imported"], summary["refused"]) == (10, 2)
    assert {(p["where"], p["error"]) for p in summary["problems"]} == {
        (f"{lines}:2", "dataType: is not NUMERIC, BOOLEAN or CATEGORICAL ('CORRECTION')"),
        (f"{page}#2", "dataType: is not NUMERIC, BOOLEAN or CATEGORICAL ('TEXT')"),
    }


def test_scores_that_cannot_be_mapped_are_refused_with_field_and_value(tmp_path: Path) -> None:
    """Without --category a categorical score is refused; without --task-type a trace
    with no tag and no name is; a trace-level score of a trace with two models, a score of
    an observation not saved, a NUMERIC value outside its config's range, a session's
    score (no trace) and an entry of no Langfuse shape are refused, each naming its
    field and value."""
    folder = _copy(tmp_path)
    base = json.loads((DATA / "scores-page-2.json").read_text())["data"][0]
    more = [
        {**base, "id": "x-1", "traceId": "t-multi", "name": "overall"},
        {**base, "id": "x-2", "observationId": "o-gone"},
        {**base, "id": "x-3", "traceId": "t-rev-1", "name": "quality", "value": 7,
         "configId": "cfg-quality"},
        {**base, "id": "x-4", "traceId": None, "sessionId": "sess-1"},
        {"id": "x-5", "name": "not a score"},
    ]  # fmt: skip
    page = folder / "scores-page-3.json"
    page.write_text(json.dumps({"data": more, "meta": {"page": 3}}))
    code, summary = _import(str(folder), "--db", str(tmp_path / "x.db"), "--agent",
                            "gpt-4o-2024-08-06=gpt4o")  # fmt: skip
    assert code == 1
    assert (summary["imported"], summary["refused"]) == (7, 7)
    errors = {p["where"].removeprefix(str(folder) + "/"): p["error"] for p in summary["problems"]}
    assert errors == {
        "scores-page-2.json#2": "stringValue: no --category LABEL=SCORE maps this label"
        " (mapped: none) ('good')",
        "scores-page-2.json#4": "traceId: the trace is not among those read, or has no name"
        " or task type tag; give --task-type ('t-untitled')",
        "scores-page-3.json#1": "traceId: the trace's observations name several models"
        " (claude-3-5-sonnet-20241022, gpt-4o-2024-08-06): score one ('t-multi')",
        "scores-page-3.json#2": "observationId: is not among the observations read: save GET"
        " /api/public/observations too ('o-gone')",
        "scores-page-3.json#3": "value: is outside its score config's range 1-5 (7)",
        "scores-page-3.json#4": "traceId: the score names no trace (a session's or a dataset"
        " run's score judges no agent's work) (None)",
        "scores-page-3.json#5": "entry: is not a Langfuse score, score config, observation or"
        " trace (['id', 'name'])",
    }


def test_the_scale_option_reads_scores_without_a_config_range(tmp_path: Path) -> None:
    """--scale 0-100 is the scale of every NUMERIC score without a config range (0.9 is
    0.09); scores on a config's range keep it."""
    db = tmp_path / "x.db"
    code, summary = _import(str(DATA), "--db", str(db), *MAPPED, "--scale", "0-100")
    assert code == 0, summary
    events = _events(db)
    assert events["langfuse:t-sql-1:helpfulness"]["score"] == 0.09
    assert events["langfuse:t-rev-1:quality"]["score"] == 7.5


def test_pages_entries_and_lines_are_told_by_their_fields(tmp_path: Path) -> None:
    """A page, a bare list of entries, a JSONL line holding one entry; a file that is not
    JSON is one refused entry naming it; an empty page is refused."""
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps([{"id": "t", "timestamp": "2026-11-01T00:00:00Z"},
                                  {"id": "o", "startTime": "2026-11-01T00:00:00Z"}]))  # fmt: skip
    lines = tmp_path / "lines.jsonl"
    lines.write_text(json.dumps({"id": "c", "name": "q", "dataType": "NUMERIC"}) + "\n\n"
                     + json.dumps({"data": [], "meta": {}}) + "\n")  # fmt: skip
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    bounds = ImportBounds()
    got = [
        (e.where, e.kind, e.error) for p in (listed, lines, broken) for e in entries_of(p, bounds)
    ]
    assert got[:3] == [
        (f"{listed}#1", "trace", None), (f"{listed}#2", "observation", None),
        (f"{lines}:1", "config", None),
    ]  # fmt: skip
    assert got[3] == (f"{lines}:3", None, "data: the page holds no entry ([])")
    assert got[4][0] == str(broken)
    assert got[4][2] is not None
    assert got[4][2].startswith("json: is not JSON: ")


def test_a_boolean_score_succeeds_by_its_value_and_the_judge_is_a_valid_name() -> None:
    """BOOLEAN 1 is 10 and a success whatever the threshold; an annotation without an
    author is judged by langfuse:ANNOTATION; an author's characters outside a judge's
    name become '-'."""
    known = Known()
    known.saw("observation", {"id": "o", "traceId": "t", "model": "m", "startTime": "x"})
    known.saw("trace", {"id": "t", "timestamp": "x", "name": "qa"})
    score = {"id": "s", "traceId": "t", "observationId": "o", "name": "ok", "source": "EVAL",
             "dataType": "BOOLEAN", "value": 1, "timestamp": "2026-11-01T00:00:00Z"}  # fmt: skip
    options = LangfuseOptions(success_from=10.0)
    item = score_item("f#1", score, known, options)
    assert item.request is not None
    assert (item.request.score, item.request.success) == (10.0, True)
    annotated = {**score, "source": "ANNOTATION", "authorUserId": None}
    request = score_item("f#1", annotated, known, options).request
    assert request is not None
    assert request.judge == "langfuse:ANNOTATION"
    request = score_item("f#1", {**annotated, "authorUserId": "Ana Lima"}, known, options).request
    assert request is not None
    assert request.judge == "langfuse:ANNOTATION:Ana-Lima"
    refused = score_item("f#1", {**score, "value": 0.5}, known, options)
    assert refused.error == "value: a BOOLEAN score must be 1 or 0 (0.5)"


def test_bad_category_options_are_one_line_and_exit_1(tmp_path: Path) -> None:
    for bad in ("good", "good=11", "good=x"):
        result = runner.invoke(app, ["import", "--format", "langfuse", str(DATA), "--db",
                                     str(tmp_path / "x.db"), "--category", bad])  # fmt: skip
        assert result.exit_code == 1, result.output
        assert "--category: " in result.output
        assert "Traceback" not in result.output
    assert not (tmp_path / "x.db").exists()


def test_the_command_as_a_process_imports_and_fits_with_the_scores_judges_and_times(
    tmp_path: Path,
) -> None:
    """`agentladder import --format langfuse` run as a program (progress bar, the fit in a
    fresh image): exit 0, the summary's lines, and skill evidence of each score's judge at
    its timestamp; run again, every score a duplicate."""
    db = tmp_path / "x.db"
    done = run_measured(["import", "--format", "langfuse", str(DATA), "--db", str(db), *MAPPED])
    assert done.code == 0, done.err
    lines = done.out.splitlines()
    assert lines[0] == "new agents (3): gpt4o, claude-3-5-sonnet-20241022, mistral-large-latest"
    assert lines[1].startswith("imported 9, duplicate 0, conflicting 0, refused 0 in ")
    assert "langfuse: read 9 scores, 6 traces, 8 observations, 3 score configs" in lines
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT payload, at FROM skill_events").fetchall()
    conn.close()
    judged = sorted(
        (json.loads(payload)["judge"], at) for payload, at in rows if "judge" in json.loads(payload)
    )
    ana = [at for judge, at in judged if judge == "langfuse:ANNOTATION:user-ana"]
    assert len(judged) == 9
    assert ana == sorted(
        datetime.fromisoformat(t).timestamp()
        for t in ("2026-11-20T11:00:00+00:00", "2026-11-20T11:05:00+00:00",
                  "2026-11-22T13:00:00+00:00")
    )  # fmt: skip
    again = run_measured(["import", "--format", "langfuse", str(DATA), "--db", str(db), *MAPPED])
    assert again.code == 0, again.err
    assert again.out.splitlines()[0].startswith("imported 0, duplicate 9, conflicting 0")


def test_two_scores_of_one_name_on_one_trace_are_one_contract(tmp_path: Path) -> None:
    """A second annotator's `quality` of a trace already scored `quality` is that
    contract again with another payload: a conflict, reported and not applied; the first
    score read stays."""
    folder = _copy(tmp_path)
    first = json.loads((DATA / "scores-page-1.json").read_text())["data"][0]
    second = {**first, "id": "s-1b", "value": 2, "authorUserId": "user-ben",
              "timestamp": "2026-11-20T12:00:00.000Z"}  # fmt: skip
    (folder / "scores-page-3.json").write_text(json.dumps({"data": [second], "meta": {}}))
    db = tmp_path / "x.db"
    code, summary = _import(str(folder), "--db", str(db), *MAPPED)
    assert code == 1
    assert (summary["imported"], summary["conflicting"]) == (9, 1)
    assert summary["problems"][0]["where"] == f"{folder}/scores-page-3.json#1"
    assert summary["problems"][0]["status"] == "conflict"
    kept = _events(db)["langfuse:t-rev-1:quality"]
    assert (kept["score"], kept["judge"]) == (7.5, "langfuse:ANNOTATION:user-ana")


def test_without_the_traces_a_score_takes_the_task_type_tag_it_carries(tmp_path: Path) -> None:
    """GET /api/public/scores gives each score its trace's tags: with the traces not
    saved, a score's `task_type:` tag still names its task type; a score without one takes
    --task-type (the trace's name is not known)."""
    folder = _copy(tmp_path)
    (folder / "traces.json").unlink()
    db = tmp_path / "x.db"
    code, summary = _import(str(folder), "--db", str(db), *MAPPED)
    assert code == 0, summary
    types = {key: event["task_type"] for key, event in _events(db).items()}
    assert types["langfuse:t-rev-1:quality"] == "code_review"
    assert types["langfuse:t-rev-2:quality"] == "code_review"
    assert types["langfuse:t-sql-1/o-sql-1:correct"] == "support"
    assert types["langfuse:t-rev-1:tone"] == "support"  # s-7 carries no trace
