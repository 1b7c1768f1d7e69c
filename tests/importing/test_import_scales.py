"""A scorer's scale is decided once for all its values (docs/import.md, "Scales"): from all
its values in the import's logs, by ``--scale``, or by a judgment's own ``scale``; 1 on a
1-10 scale is its worst. An Inspect scorer is the judge of its skill evidence, at its
run's time."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentladder.cli import app
from tests.importing.logs import sample, write_log

runner = CliRunner()


def _import(*args: str) -> dict[str, Any]:
    result = runner.invoke(app, ["import", *args, "--json"])
    assert result.stdout.strip(), result.output
    summary: dict[str, Any] = json.loads(result.stdout)
    return summary


def _scores(db: Path) -> dict[str, float]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT key, payload FROM oracle_events").fetchall()
    conn.close()
    # keys: judgment:inspect:EVAL_ID:SAMPLE:EPOCH
    return {":".join(key.split(":")[2:4]): json.loads(payload)["score"] for key, payload in rows}


def _evidence(db: Path) -> list[tuple[str, float]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT payload, at FROM skill_events ORDER BY seq").fetchall()
    conn.close()
    return [(json.loads(payload)["judge"], at) for payload, at in rows]


def test_a_judges_one_to_ten_is_read_on_its_scale_over_all_logs(tmp_path: Path) -> None:
    """Two models' logs by one 1-10 judge: the weaker model's 2 to 5 and the stronger's 1
    to 10 are read on one scale (1 -> 0, 2 -> 1.11, 5 -> 4.44, 10 -> 10), not each log on
    its own; the judge of the evidence is the scorer, at the run's creation."""
    weak = write_log(
        tmp_path / "weak.eval",
        [sample(1, 1, {"judge": 2}), sample(2, 1, {"judge": 5})],
        eval_id="evalWeak",
        model="openai/gpt-4o-mini",
    )
    strong = write_log(
        tmp_path / "strong.json",
        [sample(1, 1, {"judge": 1}), sample(2, 1, {"judge": 10})],
        eval_id="evalStrong",
        model="openai/gpt-4o",
    )
    db = tmp_path / "x.db"
    summary = _import(str(weak), str(strong), "--db", str(db))
    assert summary["imported"] == 4, summary
    assert _scores(db) == pytest.approx(
        {"evalWeak:1": 10 / 9, "evalWeak:2": 40 / 9, "evalStrong:1": 0.0, "evalStrong:2": 10.0}
    )
    created = datetime(2026, 1, 1, tzinfo=UTC).timestamp()
    assert _evidence(db) == [("inspect:judge", created)] * 4


@pytest.mark.parametrize(
    ("values", "scale", "expected"),
    [
        ((0, 0.5, 1), None, [0.0, 5.0, 10.0]),  # 0-1
        ((0, 3, 10), None, [0.0, 3.0, 10.0]),  # 0-10: a 0 given
        ((0, 55, 100), None, [0.0, 5.5, 10.0]),  # 0-100
        ((1, 4, 10), "0-10", [1.0, 4.0, 10.0]),  # --scale over what the values suggest
    ],
)
def test_each_scale_maps_its_lowest_to_0_and_its_highest_to_10(
    tmp_path: Path, values: tuple[float, ...], scale: str | None, expected: list[float]
) -> None:
    log = write_log(
        tmp_path / "run.eval", [sample(n, 1, {"s": v}) for n, v in enumerate(values, 1)]
    )
    db = tmp_path / "x.db"
    summary = _import(str(log), "--db", str(db), *(["--scale", scale] if scale else []))
    assert summary["imported"] == len(values), summary
    got = _scores(db)
    assert [got[f"evalAbc123:{n}"] for n in range(1, len(values) + 1)] == pytest.approx(expected)


def test_jsonl_lines_are_on_0_to_10_unless_they_or_the_import_say_a_scale(
    tmp_path: Path,
) -> None:
    """As the API: 0-10 without a scale; a line's own `scale` wins over --scale; a score
    outside its scale is refused naming the field and the value; the line's judge and
    observed_at are the evidence's."""
    lines = [
        {"agent_id": "a1", "contract_id": "c1", "score": 1},
        {"agent_id": "a1", "contract_id": "c2", "score": 80, "scale": "0-100"},
        {"agent_id": "a1", "contract_id": "c3", "score": 10, "judge": "gpt-4o",
         "observed_at": "2026-03-01T12:00:00+01:00"},
        {"agent_id": "a1", "contract_id": "c4", "score": 0},
    ]  # fmt: skip
    path = tmp_path / "j.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    db = tmp_path / "x.db"
    summary = _import(str(path), "--db", str(db), "--scale", "1-10")
    assert (summary["imported"], summary["refused"]) == (3, 1), summary
    assert summary["problems"][0]["error"] == "score: is outside the scale 1-10 (0)"
    with sqlite3.connect(db) as conn:
        rows = dict(conn.execute("SELECT key, payload FROM oracle_events").fetchall())
    conn.close()
    scores = {key.rsplit(":", 1)[1]: json.loads(p)["score"] for key, p in rows.items()}
    assert scores == pytest.approx({"c1": 0.0, "c2": 8.0, "c3": 10.0})
    evidence = _evidence(db)
    assert [judge for judge, _ in evidence] == ["oracle", "oracle", "gpt-4o"]
    assert evidence[2][1] == datetime(2026, 3, 1, 11, tzinfo=UTC).timestamp()
