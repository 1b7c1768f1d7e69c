"""Model versions in imported history: a JSONL line's `model_version`, an Inspect
sample's served model (`output.model`). Where an agent's imported evidence changes
version, the import stores a `ModelChange` skill evidence at the new version's first
evidence (key `model:<agent>:<digest>`), so the skill model treats what follows as a new
model's; the same import run twice stores nothing new."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentladder.cli import app
from agentladder.importing.versions import version_change
from agentladder.services.container import Services
from tests.importing.helpers import run_with_services
from tests.importing.logs import sample, write_log

runner = CliRunner()
START = datetime(2026, 3, 1, tzinfo=UTC)


def _import(*args: str) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, ["import", *args, "--json"])
    assert result.stdout.strip(), result.output
    return result.exit_code, json.loads(result.stdout)


def _changes(db: Path) -> list[tuple[str, float, dict[str, Any]]]:
    """(key, at, payload) of every stored model change, by seq."""
    conn = sqlite3.connect(db)
    rows = conn.execute(
        "SELECT key, at, payload FROM skill_events WHERE kind = 'model_change' ORDER BY seq"
    ).fetchall()
    conn.close()
    return [(key, at, json.loads(payload)) for key, at, payload in rows]


def _line(agent: str, n: int, day: int, score: float, version: str | None) -> dict[str, Any]:
    line: dict[str, Any] = {
        "agent_id": agent, "contract_id": f"{agent}-{n}", "task_type": "qa", "score": score,
        "observed_at": (START + timedelta(days=day)).isoformat(),
    }  # fmt: skip
    if version is not None:
        line["model_version"] = version
    return line


def _history(path: Path, versioned: bool) -> Path:
    """Agent a: 20 answers of v1 scored 9 (days 0-19), then 6 of v2 scored 3 (days 20-25),
    listed newest first (a file's order is not time); agent b: 10 of v1 scored 6."""
    lines = [_line("a", n, n, 9.0, "v1" if versioned else None) for n in range(20)]
    lines += [_line("a", n, n, 3.0, "v2" if versioned else None) for n in range(20, 26)]
    lines += [_line("b", n, n, 6.0, "v1" if versioned else None) for n in range(10)]
    path.write_text("".join(json.dumps(line) + "\n" for line in reversed(lines)))
    return path


def _skill(db: Path, agent: str) -> float:
    async def body(services: Services) -> float:
        entry = (await services.skill.of_agent(agent)).overall
        return entry.skill

    return run_with_services(f"sqlite:///{db}", body)


def test_a_new_version_starts_a_new_model_once(tmp_path: Path) -> None:
    """One change per agent and version, at the version's first evidence (v2 of a at day
    20), keyed by the version; the same import again stores nothing new; the skill
    estimate of a after its v2 evidence sits nearer v2's scores than the same history
    without versions gives."""
    db = tmp_path / "versions.db"
    history = _history(tmp_path / "h.jsonl", versioned=True)
    code, summary = _import(str(history), "--db", str(db))
    assert code == 0, summary
    assert (summary["imported"], summary["model_versions"]) == (36, 3)
    day = 86_400.0
    expected = [
        version_change("a", "", "v1", START.timestamp()),
        version_change("a", "", "v2", START.timestamp() + 20 * day),
        version_change("b", "", "v1", START.timestamp()),
    ]
    stored = _changes(db)
    assert [(key, at) for key, at, _ in stored] == [(c.key, c.at) for c in expected]
    assert stored[1][0].startswith("model:a:")
    assert stored[1][2]["model_name"] == "v2"
    code, again = _import(str(history), "--db", str(db))
    assert (code, again["imported"], again["duplicate"], again["model_versions"]) == (0, 0, 36, 0)
    assert len(_changes(db)) == 3
    plain = tmp_path / "plain.db"
    code, summary = _import(
        str(_history(tmp_path / "p.jsonl", versioned=False)), "--db", str(plain)
    )
    assert (code, summary["model_versions"]) == (0, 0)
    assert _changes(plain) == []
    versioned, unversioned = _skill(db, "a"), _skill(plain, "a")
    assert versioned < unversioned - 0.5, (versioned, unversioned)


def test_a_later_import_of_a_new_version_adds_its_change(tmp_path: Path) -> None:
    """History imported in two runs: the second, of v2 only, stores v2's change at its
    first evidence; the first run's v1 change stays as it was."""
    db = tmp_path / "x.db"
    first = tmp_path / "first.jsonl"
    first.write_text("".join(json.dumps(_line("a", n, n, 8.0, "v1")) + "\n" for n in range(5)))
    second = tmp_path / "second.jsonl"
    second.write_text(
        "".join(json.dumps(_line("a", n, n, 4.0, "v2")) + "\n" for n in range(10, 15))
    )
    assert _import(str(first), "--db", str(db))[1]["model_versions"] == 1
    assert _import(str(second), "--db", str(db))[1]["model_versions"] == 1
    assert [(p["model_name"], at) for _, at, p in _changes(db)] == [
        ("v1", START.timestamp()), ("v2", START.timestamp() + 10 * 86_400.0),
    ]  # fmt: skip


def test_inspect_logs_name_the_served_model(tmp_path: Path) -> None:
    """Two logs of one agent (--agent maps both models), a month apart, each served by
    another snapshot: two changes at the runs' times, named by the served model, at the
    provider of the log's model; an errored sample names no version."""
    old = write_log(
        tmp_path / "old.eval",
        [sample(1, 1, {"m": "C"}, served="gpt-4o-2024-05-13")],
        eval_id="runOld", model="openai/gpt-4o",
    )  # fmt: skip
    new = write_log(
        tmp_path / "new.json",
        [
            sample(1, 1, {"m": "I"}, served="gpt-4o-2024-08-06", model="openai/gpt-4o-new"),
            sample(2, 1, error="boom", served="gpt-4o-2099-01-01", model="openai/gpt-4o-new"),
        ],
        eval_id="runNew", model="openai/gpt-4o-new",
    )  # fmt: skip
    text = new.read_text().replace("2026-01-01T00:00:00+00:00", "2026-02-01T00:00:00+00:00")
    new.write_text(text)
    db = tmp_path / "x.db"
    code, summary = _import(
        str(old), str(new), "--db", str(db),
        "--agent", "openai/gpt-4o=gpt4o", "--agent", "openai/gpt-4o-new=gpt4o",
    )  # fmt: skip
    assert code == 0, summary
    assert summary["model_versions"] == 2
    changes = _changes(db)
    assert [(p["agent_id"], p["model_name"], p["provider_id"]) for _, _, p in changes] == [
        ("gpt4o", "gpt-4o-2024-05-13", "openai"),
        ("gpt4o", "gpt-4o-2024-08-06", "openai"),
    ]
    assert [at for _, at, _ in changes] == [
        datetime(2026, 1, 1, tzinfo=UTC).timestamp(),
        datetime(2026, 2, 1, tzinfo=UTC).timestamp(),
    ]


def test_a_bad_model_version_is_refused_naming_it(tmp_path: Path) -> None:
    """A model_version that is not a printable string of 1 to 128 characters refuses its
    line, naming the field and value; the others are imported."""
    path = tmp_path / "h.jsonl"
    lines = [_line("a", 1, 1, 8.0, "v1"), {**_line("a", 2, 2, 8.0, None), "model_version": 3},
             {**_line("a", 3, 3, 8.0, None), "model_version": "x" * 129}]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    code, summary = _import(str(path), "--db", str(tmp_path / "x.db"))
    assert (code, summary["imported"], summary["refused"]) == (1, 1, 2)
    assert [p["error"][:60] for p in summary["problems"]] == [
        "model_version: must be a printable string of 1 to 128 charac",
    ] * 2
    assert summary["problems"][0]["error"].endswith("(3)")
