"""Imported history, then a real `agentladder serve` on the same file: history is evidence,
not probation (a model with one low-scored answer keeps its level's validation rate), the
agents known by their evidence alone can be routed for work the caller runs (`POST
/route` picks them; with ``online_only`` they are listed as offline), and
``cheapest_above`` with a floor nobody can reach answers 400 ``too_few_agents`` with every
agent left out and why, never an agent whose whole interval lies below the floor."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from agentladder.cli import app
from agentladder.importing.report import FITTED
from tests.served import start_server

# three models of one benchmark: each answered 30 questions well and one badly
MODELS = {"model-a": 9.5, "model-b": 6.0, "model-c": 4.5}


def history(path: Path) -> Path:
    """30 judged answers per model at its score, then one low-scored failed answer."""
    lines = []
    for model, score in MODELS.items():
        lines += [
            {"agent_id": model, "contract_id": f"q{i}", "task_type": "qa", "score": score}
            for i in range(30)
        ]
        lines.append(
            {"agent_id": model, "contract_id": "q30", "task_type": "qa", "score": 1.0,
             "success": False}
        )  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def route(server: Any, **body: Any) -> httpx.Response:
    """POST /route with ``body``."""
    return httpx.post(server.url("/route"), json={"task_type": "qa", **body}, timeout=10)


def test_imported_history_keeps_the_level_rate_and_its_agents_can_be_routed(
    tmp_path: Path,
) -> None:
    """After `agentladder import`: the new agents are listed by the import; no model is on
    probation for its old failures, and each is validated at its level's rate or, where
    its failure share needs more to keep sentinel.aoql (0.02), at that (model-a: 1 failure
    in 31, expert or trusted by XP, validated at 1 - 0.02 / (1/31)); POST /route picks
    model-a and model-b (the best lower bounds), each known
    by its evidence with no declared price; online_only lists all three as offline, in a
    400 naming each; cheapest_above at 9.9 is 400 too_few_agents, every agent left out
    below the floor with its interval, none picked whose interval lies below it."""
    db = tmp_path / "history.db"
    imported = CliRunner().invoke(
        app, ["import", str(history(tmp_path / "h.jsonl")), "--db", str(db), "--json"]
    )
    assert imported.exit_code == 0, imported.output
    summary = json.loads(imported.stdout)
    assert summary["imported"] == 93
    served = start_server(tmp_path, "agents: []\n", db="history.db")
    try:
        rates = {
            model: httpx.get(
                served.url(f"/oracle/agents/{model}/validation-rate?task_type=qa"), timeout=10
            ).json()
            for model in MODELS
        }
        profile = httpx.get(served.url("/oracle/profiles/model-a"), timeout=10).json()
        picked = route(served, count=2)
        offline = route(served, count=2, online_only=True)
        floor = route(served, count=2, strategy="cheapest_above", quality_floor=9.9)
    finally:
        served.stop()
    for model, rate in rates.items():
        assert rate["clearance_left"] is None
        share = rate["failure_share"]
        needed = 1 - 0.02 / share if share > 0.02 else 0.0
        if needed > rate["validation_rate"]:
            assert rate["reason"] == "evidence", (model, rate)
            assert rate["effective_rate"] == pytest.approx(needed)
        else:
            assert rate["reason"] == "level", (model, rate)
            assert rate["effective_rate"] == rate["validation_rate"]
    assert rates["model-a"]["level"] in ("trusted", "expert")
    assert rates["model-a"]["failure_share"] == pytest.approx(1 / 31)
    assert rates["model-a"]["effective_rate"] == pytest.approx(1 - 0.02 * 31)
    assert "probation" not in profile
    assert profile["stats"]["successful_tasks"] == 30  # the failure counts, as history
    assert picked.status_code == 200, picked.text
    answer = picked.json()
    assert [p["agent_id"] for p in answer["agents"]] == ["model-a", "model-b"]
    assert [p["estimated_cost_per_round"] for p in answer["agents"]] == [None, None]
    assert offline.status_code == 400, offline.text
    error = offline.json()["error"]
    assert error["code"] == "too_few_agents"
    assert {(e["agent_id"], e["reason"]) for e in error["excluded"]} == {
        (model, "offline") for model in MODELS
    }
    assert error["excluded"][0]["detail"].startswith("never heartbeated")
    assert floor.status_code == 400, floor.text
    error = floor.json()["error"]
    assert error["code"] == "too_few_agents"
    left = {e["agent_id"]: e for e in error["excluded"]}
    assert set(left) | set(error["qualified"]) == set(MODELS)
    assert {"model-b", "model-c"} <= set(left)
    for entry in left.values():
        assert entry["reason"] == "below_quality_floor"
        assert "lies below quality_floor 9.9" in entry["detail"]
    assert summary["new_agents"] == list(MODELS)


def test_a_running_server_routes_with_an_import_from_its_next_request(tmp_path: Path) -> None:
    """A server on a SQLite file, its routing projection loaded (one routing); then an
    import of a new, better agent into the same file by another process's command: the
    import says the server uses it from its next request, and the very next POST /route
    picks the new agent (before, the projection saw it at its next whole load, up to
    routing.projection_refresh_s, 60 s, later; the server's own fit found nothing new)."""
    db = tmp_path / "history.db"
    first = CliRunner().invoke(
        app, ["import", str(history(tmp_path / "h.jsonl")), "--db", str(db), "--json"]
    )
    assert first.exit_code == 0, first.output
    served = start_server(tmp_path, "agents: []\n", db="history.db")
    try:
        before = route(served, count=2)
        assert before.status_code == 200, before.text
        assert [p["agent_id"] for p in before.json()["agents"]] == ["model-a", "model-b"]
        better = tmp_path / "better.jsonl"
        better.write_text(
            "".join(
                json.dumps({"agent_id": "model-z", "contract_id": f"z{i}", "task_type": "qa",
                            "score": 10.0}) + "\n"
                for i in range(40)
            ),
            encoding="utf-8",
        )  # fmt: skip
        imported = CliRunner().invoke(app, ["import", str(better), "--db", str(db)])
        after = route(served, count=2)  # the very next request, at once
    finally:
        served.stop()
    assert imported.exit_code == 0, imported.output
    assert FITTED in imported.stdout.splitlines()
    assert after.status_code == 200, after.text
    assert [p["agent_id"] for p in after.json()["agents"]] == ["model-z", "model-a"]
