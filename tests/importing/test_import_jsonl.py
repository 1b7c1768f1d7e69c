"""`agentladder import` of JSONL: each line a judgment of POST /oracle/judgments, refused
lines named by line, field and value, exactly once, XP, ledger, skill and replay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentladder.cli import app
from agentladder.services.oracle.models import JudgmentRequest
from tests.importing.helpers import run_with_services

runner = CliRunner()


def _write(path: Path, lines: list[Any]) -> Path:
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    )
    return path


def _import(*args: str) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, ["import", *args, "--json"])
    assert result.stdout.strip(), result.output
    return result.exit_code, json.loads(result.stdout)


GOOD = [
    {"agent_id": "a1", "contract_id": "c1", "task_type": "sql", "score": 8.5, "cost": 0.01,
     "budget": 0.02},
    {"agent_id": "a1", "contract_id": "c2", "score": 4.0, "success": False},
    {"agent_id": "a2", "contract_id": "c1", "task_type": "code", "score": 9.5, "retries": 1},
]  # fmt: skip


def test_bad_lines_are_refused_by_line_field_and_value_and_the_rest_imported(
    tmp_path: Path,
) -> None:
    """Lines 2, 3 and 5 are refused (naming line, field, value), line 6 conflicts; the
    good lines are imported; a re-run imports nothing new; exit 1 while problems remain."""
    path = _write(
        tmp_path / "h.jsonl",
        [GOOD[0], "{not json", {**GOOD[1], "score": 12}, GOOD[1], {"agent_id": "a/b",
         "contract_id": "x"}, {**GOOD[0], "score": 1.0}, "", GOOD[2]],
    )  # fmt: skip
    db = tmp_path / "x.db"
    code, summary = _import(str(path), "--db", str(db))
    assert code == 1
    counts = [summary[k] for k in ("imported", "duplicate", "conflicting", "refused")]
    assert counts == [3, 0, 1, 3]
    problems = {p["where"]: (p["status"], p["error"]) for p in summary["problems"]}
    assert problems[f"{path}:2"][0] == "refused"
    assert problems[f"{path}:2"][1].startswith("line: ")
    assert problems[f"{path}:3"] == ("refused", problems[f"{path}:3"][1])
    assert problems[f"{path}:3"][1].startswith("score: ")
    assert problems[f"{path}:3"][1].endswith("(12)")
    assert problems[f"{path}:5"][1].startswith("agent_id: ")
    assert "'a/b'" in problems[f"{path}:5"][1]
    assert problems[f"{path}:6"][0] == "conflict"
    code, again = _import(str(path), "--db", str(db))
    assert [again[k] for k in ("imported", "duplicate", "conflicting", "refused")] == [0, 3, 1, 3]


def test_imported_lines_equal_judgments_submitted_one_by_one(tmp_path: Path) -> None:
    """The same XP, ledger lines, profiles and skill states as POST /oracle/judgments gives
    for the lines marked history (and new agents); the failed line starts no probation;
    the summary names the new agents; the skill states once the skill model has fitted the
    evidence (the import ends with a fit); `oracle verify` passes after the import."""
    path = _write(tmp_path / "h.jsonl", GOOD)
    db = tmp_path / "x.db"
    code, summary = _import(str(path), "--db", str(db))
    assert code == 0, summary
    assert summary["imported"] == 3
    assert summary["new_agents"] == ["a1", "a2"]

    async def one_by_one(services: Any) -> Any:
        for line in GOOD:
            request = JudgmentRequest.model_validate({**line, "history": True, "new_agent": True})
            await services.oracle.submit_for_judgment(request)
        await services.skill.fit()
        return await _snapshot(services)

    expected = run_with_services("memory://", one_by_one)
    got = run_with_services(f"sqlite:///{db}", _snapshot)
    assert got == expected
    assert all(not profile.get("probation") for profile, _ in got[0])  # history, no probation
    verified = runner.invoke(app, ["oracle", "verify", "--store", f"sqlite:///{db}", "--json"])
    assert verified.exit_code == 0, verified.output
    report = json.loads(verified.stdout)
    assert (report["events_replayed"], report["skill_events_replayed"]) == (3, 3)
    assert report["differences"] == {}
    assert report["skill_differences"] == []


async def _snapshot(services: Any) -> Any:
    store = services.store
    profiles = [
        (p.model_dump(exclude={"achievements"}), [(a.name, a.xp) for a in p.achievements])
        for p in await store.list_profiles()
    ]
    ledgers = {
        agent: [(e.event, e.xp_awarded, e.contract_id) for e in await store.ledger(agent)]
        for agent in ("a1", "a2")
    }
    skills = [
        (s.agent_id, {t: (round(e.mean, 6), round(e.var, 6), e.n) for t, e in s.types.items()})
        for s in await store.list_skills()
    ]
    return profiles, ledgers, skills


def test_task_type_fills_the_lines_that_name_none(tmp_path: Path) -> None:
    """--task-type is the type of lines without one; a line's own type stays."""
    path = _write(tmp_path / "h.jsonl", GOOD)
    db = tmp_path / "x.db"
    code, _ = _import(str(path), "--db", str(db), "--task-type", "review")

    async def types(services: Any) -> Any:
        return {
            (e.agent_id, e.payload["contract_id"]): e.payload["task_type"]
            for agent in ("a1", "a2")
            for e in await services.store.events(agent)
        }

    assert code == 0
    assert run_with_services(f"sqlite:///{db}", types) == {
        ("a1", "c1"): "sql", ("a1", "c2"): "review", ("a2", "c1"): "code",
    }  # fmt: skip


def test_bad_options_are_one_line_errors(tmp_path: Path) -> None:
    """A bad --agent, --task-type, a missing path, --store with --db: one line, exit 1."""
    path = _write(tmp_path / "h.jsonl", GOOD)
    db = str(tmp_path / "x.db")
    cases = [
        (["--agent", "nomapping"], "--agent: must be MODEL=AGENT_ID ('nomapping')"),
        (["--task-type", "Bad Type"], "task_type: must match"),
        (["--store", "memory://"], "--db: give --store or --db, not both"),
    ]
    for extra, said in cases:
        result = runner.invoke(app, ["import", str(path), "--db", db, *extra])
        assert result.exit_code == 1
        assert said in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    missing = runner.invoke(app, ["import", str(tmp_path / "none.jsonl"), "--db", db])
    assert missing.exit_code == 1
    assert missing.stderr.startswith("error: PATH: no such file or folder")
