"""An import's skill evidence is deferred: stored with its Oracle event, no state moved
until the import's fit of the whole log (``ScoreEvidence.deferred``), on every store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentladder.domain.skill.evidence import ScoreEvidence
from agentladder.importing.jsonl import read_jsonl
from agentladder.importing.run import run_import
from agentladder.services.oracle.batch import submit_many
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.verify import verify_store
from agentladder.services.skill.replay import close
from agentladder.services.skill.service import evidence_hash, evidence_json
from tests.conftest import unique_nats_url
from tests.importing.helpers import run_with_services

AGENTS = 12
LINES = 240


def _history(path: Path) -> list[dict[str, Any]]:
    lines = [
        {"agent_id": f"agent-{i % AGENTS}", "contract_id": f"h-{i}",
         "task_type": ("sql", "code")[i % 2], "score": round((i * 7.3) % 10, 1),
         "observed_at": 1_700_000_000 + 60 * i}
        for i in range(LINES)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return lines


def _live(agent: str, contract: str, score: float) -> JudgmentRequest:
    return JudgmentRequest(
        agent_id=agent, contract_id=contract, task_type="sql", score=score, new_agent=True
    )


def test_an_import_moves_no_skill_state_until_its_fit(store_url: str, tmp_path: Path) -> None:
    """A live agent's state, stepped by its own judgment, is left as it was by an import
    without its fit (as a killed import leaves it); the imported events say ``deferred``;
    ``oracle verify`` passes with the imported events counted as waiting for the fit; a
    live judgment after them steps the state as before; the fit then places everything."""
    path = tmp_path / "h.jsonl"
    _history(path)

    async def body(services: Any) -> dict[str, Any]:
        store, oracle, skill = services.store, services.oracle, services.skill
        await oracle.submit_for_judgment(_live("agent-0", "live-0", 8.0))
        before = (await store.get_skills(["agent-0"]))["agent-0"]
        summary = await run_import(oracle, read_jsonl(path), fit=False)
        after = await store.get_skills([f"agent-{i}" for i in range(AGENTS)])
        events = await store.skill_events(after=0, limit=LINES + 10)
        waiting = await verify_store(store, services.settings.oracle, skill_rules=skill.rules)
        await oracle.submit_for_judgment(_live("agent-0", "live-1", 2.0))
        stepped = (await store.get_skills(["agent-0"]))["agent-0"]
        then = await verify_store(store, services.settings.oracle, skill_rules=skill.rules)
        await skill.fit()
        fitted = await store.get_skills([f"agent-{i}" for i in range(AGENTS)])
        done = await verify_store(store, services.settings.oracle, skill_rules=skill.rules)
        return {
            "summary": summary, "before": before, "after": after, "events": events,
            "waiting": waiting, "stepped": stepped, "then": then, "fitted": fitted,
            "done": done,
        }  # fmt: skip

    found = run_with_services(store_url, body)
    assert found["summary"].imported == LINES
    assert found["after"] == {"agent-0": found["before"]}  # no state made or moved
    imported = [e for e in found["events"] if ":h-" in e.key]
    assert len(imported) == LINES
    assert all(json.loads(e.payload)["deferred"] is True for e in imported)
    live = [e for e in found["events"] if e.key == "judgment:agent-0:live-0"]
    assert len(live) == 1
    assert "deferred" not in json.loads(live[0].payload)
    waiting = found["waiting"]
    assert waiting.ok, waiting
    assert waiting.skill_fit_pending == LINES + 1  # never fitted: every event waits
    stepped = found["stepped"]
    assert stepped.types["sql"].n == found["before"].types["sql"].n + 1  # the live step
    assert stepped.types["sql"].mean < found["before"].types["sql"].mean
    assert found["then"].ok, found["then"]
    fitted, done = found["fitted"], found["done"]
    assert sorted(fitted) == sorted(f"agent-{i}" for i in range(AGENTS))
    assert sum(e.n for state in fitted.values() for e in state.types.values()) == LINES + 2
    assert done.ok, done
    assert done.skill_fit_pending == 0


def test_deferred_evidence_fits_as_stepped_evidence_does(
    store_url: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The same judgments imported (deferred) and submitted as a batch (stepped) give the
    same states once fitted: the fit reads the evidence, not how it was applied."""
    path = tmp_path / "h.jsonl"
    lines = _history(path)

    async def imported(services: Any) -> Any:
        await run_import(services.oracle, read_jsonl(path))
        return await services.store.list_skills()

    async def stepped(services: Any) -> Any:
        requests = [
            JudgmentRequest.model_validate({**line, "history": True, "new_agent": True})
            for line in lines
        ]
        await submit_many(services.oracle, requests)
        await services.skill.fit()
        return await services.store.list_skills()

    deferred_states = run_with_services(store_url, imported)
    if store_url.startswith("nats://"):
        other = unique_nats_url(request.getfixturevalue("session_nats_server").url)
    elif store_url.startswith("sqlite:"):
        other = f"sqlite:///{tmp_path / 'stepped.db'}"
    else:
        other = "memory://"  # a new one for each run
    stepped_states = run_with_services(other, stepped)
    assert [s.agent_id for s in deferred_states] == [s.agent_id for s in stepped_states]
    for a, b in zip(deferred_states, stepped_states, strict=True):
        assert {k: e.n for k, e in a.types.items()} == {k: e.n for k, e in b.types.items()}
        assert close(
            {k: (e.mean, e.var) for k, e in a.types.items()},
            {k: (e.mean, e.var) for k, e in b.types.items()},
            1e-9,
        ), a.agent_id


def test_deferral_is_not_part_of_the_evidence() -> None:
    """The fingerprint leaves ``deferred`` out (a live repeat of an imported judgment is a
    repeat, not a conflict); the stored text holds it only when set, so every other
    event's text is what it was before the field existed."""
    common = {"key": "judgment:a:c", "at": 5.0, "agent_id": "a", "task_type": "sql",
              "score": 7.5}  # fmt: skip
    live, late = ScoreEvidence(**common), ScoreEvidence(**common, deferred=True)
    assert evidence_hash(live) == evidence_hash(late)
    assert evidence_json(live) == (
        '{"kind":"judgment","key":"judgment:a:c","at":5.0,"agent_id":"a","task_type":"sql",'
        '"score":7.5,"success":true,"judge":"oracle"}'
    )
    assert json.loads(evidence_json(late))["deferred"] is True
    assert live.touched() == ("a",)
    assert late.touched() == ()


def test_a_live_repeat_of_an_imported_judgment_is_a_duplicate(
    store_url: str, tmp_path: Path
) -> None:
    """An imported judgment sent again through the Oracle (same payload): a duplicate, its
    skill evidence not applied twice."""
    path = tmp_path / "h.jsonl"
    line = {"agent_id": "agent-1", "contract_id": "c-1", "task_type": "sql", "score": 6.0}
    path.write_text(json.dumps(line) + "\n")

    async def body(services: Any) -> Any:
        await run_import(services.oracle, read_jsonl(path))
        again = await services.oracle.submit_for_judgment(
            JudgmentRequest(agent_id="agent-1", contract_id="c-1", task_type="sql", score=6.0)
        )
        events = await services.store.skill_events(after=0, limit=10)
        return again, events

    again, events = run_with_services(store_url, body)
    assert again.duplicate
    assert [e.key for e in events] == ["judgment:agent-1:c-1"]


def test_a_rerun_that_imports_nothing_fits_what_a_killed_import_left(
    store_url: str, tmp_path: Path
) -> None:
    """An import killed before its fit (``fit=False``), then run again: every line a
    duplicate, and the re-run fits the evidence the first left waiting (before, a re-run
    that imported nothing did not fit). A third run has nothing to fit."""
    path = tmp_path / "h.jsonl"
    _history(path)

    async def body(services: Any) -> tuple[Any, ...]:
        await run_import(services.oracle, read_jsonl(path), fit=False)
        waiting = await services.skill.needs_fit()
        again = await run_import(services.oracle, read_jsonl(path))
        fleet = await services.store.get_fleet_skill()
        states = await services.store.list_skills()
        return waiting, again, fleet, states, await services.skill.needs_fit()

    waiting, again, fleet, states, still = run_with_services(store_url, body)
    assert waiting
    assert (again.imported, again.duplicate) == (0, LINES)
    assert fleet.fit is not None
    assert fleet.fit.events == LINES
    assert len(states) == AGENTS
    assert not still


def test_the_stored_judgment_decides_whether_its_evidence_is_deferred(store_url: str) -> None:
    """History sent to the API is deferred, current work is stepped; a repeat that applies
    evidence a first write left out (``evidence=False`` stores the event alone) defers it
    as the stored judgment says, not as the repeat's ``history`` says."""

    async def body(services: Any) -> dict[str, Any]:
        oracle, store = services.oracle, services.store
        past = _live("agent-p", "p-1", 7.0).model_copy(update={"history": True})
        await oracle.submit_for_judgment(past)
        await oracle.submit_for_judgment(_live("agent-c", "c-1", 7.0))
        # events stored without their evidence, then repeated with the other `history`
        await oracle.submit_for_judgment(_live("agent-q", "q-1", 7.0), evidence=False)
        await oracle.submit_for_judgment(
            _live("agent-r", "r-1", 7.0).model_copy(update={"history": True}), evidence=False
        )
        await oracle.submit_for_judgment(
            _live("agent-q", "q-1", 7.0).model_copy(update={"history": True})
        )
        await oracle.submit_for_judgment(_live("agent-r", "r-1", 7.0))
        events = {e.key: json.loads(e.payload) for e in await store.skill_events(after=0)}
        states = await store.get_skills(["agent-p", "agent-c", "agent-q", "agent-r"])
        report = await verify_store(
            store, services.settings.oracle, skill_rules=services.skill.rules
        )
        return {"events": events, "states": states, "report": report}

    found = run_with_services(store_url, body)
    deferred = {key.split(":")[1]: e.get("deferred", False) for key, e in found["events"].items()}
    assert deferred == {"agent-p": True, "agent-c": False, "agent-q": False, "agent-r": True}
    assert sorted(found["states"]) == ["agent-c", "agent-q"]
    assert found["report"].ok, found["report"]
