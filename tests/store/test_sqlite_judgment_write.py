"""One judgment on SQLite is one job of the writer: its Oracle event, ledger lines, profile
and skill evidence in one transaction (``SqliteStore.apply_oracle_then_skill``); and the
caches of decoded skill states and registrations never serve one another writer replaced."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Mapping
from pathlib import Path

import pytest

from agentladder.domain.agents import AgentConfig
from agentladder.domain.skill import AgentSkill, Estimate, FleetSkill, SkillRules
from agentladder.domain.skill.state import new_skill, replace
from agentladder.errors import StoreUnavailable
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.service import Oracle
from agentladder.services.skill.service import SkillService
from agentladder.store.records import Registration
from agentladder.store.skills import SkillCommit, SkillEvent, SkillFitCommit, SkillFold
from agentladder.store.sqlite.store import SqliteStore

REQUEST = JudgmentRequest(agent_id="ann", contract_id="c-1", task_type="sql", score=8.5)
REFUSE = (
    "CREATE TRIGGER refuse BEFORE INSERT ON skill_events"
    " BEGIN SELECT RAISE(ABORT, 'skill log refused'); END"
)


async def _stored(store: SqliteStore) -> tuple[int, int, int, int]:
    """Events, profiles, ledger lines and skill events stored, counted in the file."""

    def run(conn: sqlite3.Connection) -> tuple[int, int, int, int]:
        tables = ("oracle_events", "agent_profiles", "xp_history", "skill_events")
        counts = [conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables]
        return counts[0], counts[1], counts[2], counts[3]

    return await store._read(run)


def test_a_refused_skill_write_leaves_nothing_of_the_judgment(tmp_path: Path) -> None:
    """The skill log refuses the insert (a trigger): the judgment fails and the Oracle's
    event, profile and ledger lines are not stored either; once the log takes it again,
    the same request is applied whole (one event of each kind)."""
    path = tmp_path / "a.db"

    async def body() -> None:
        store = SqliteStore(path)
        try:
            oracle = Oracle(store, skill=SkillService(store))
            await store._write(lambda conn: conn.execute(REFUSE))
            with pytest.raises((sqlite3.IntegrityError, StoreUnavailable), match="refused"):
                await oracle.submit_for_judgment(REQUEST)
            assert await _stored(store) == (0, 0, 0, 0)
            await store._write(lambda conn: conn.execute("DROP TRIGGER refuse"))
            result = await oracle.submit_for_judgment(REQUEST)
            assert not result.duplicate
            (event,) = await store.events("ann")
            assert await _stored(store) == (1, 1, len(event.lines), 1)
            assert await store.get_skill_event("judgment:ann:c-1") is not None
        finally:
            await store.close()

    asyncio.run(body())


def test_a_judgment_and_its_evidence_commit_once(tmp_path: Path) -> None:
    """A new judgment with a skill model costs one commit of the writer, not two."""
    path = tmp_path / "a.db"

    async def body() -> None:
        store = SqliteStore(path)
        try:
            oracle = Oracle(store, skill=SkillService(store))
            await oracle.submit_for_judgment(REQUEST.model_copy(update={"contract_id": "c-0"}))
            statements: list[str] = []
            store._write_conn.set_trace_callback(statements.append)
            try:
                await oracle.submit_for_judgment(REQUEST)
            finally:
                store._write_conn.set_trace_callback(None)
            assert statements.count("COMMIT") == 1, statements
            assert any(s.startswith("INSERT INTO skill_events") for s in statements)
        finally:
            await store.close()

    asyncio.run(body())


def _state(model_changes: int) -> AgentSkill:
    return replace(new_skill("x", SkillRules()), model_changes=model_changes)


def _writing(key: str, state: AgentSkill, seen: list[Mapping[str, AgentSkill]]) -> SkillFold:
    """A skill fold that records the states it is given and writes ``state``."""

    def fold(states: Mapping[str, AgentSkill], fleet: FleetSkill) -> SkillCommit:
        seen.append(dict(states))
        event = SkillEvent(key=key, kind="judgment", payload="{}", payload_hash=key, at=1.0)
        return SkillCommit(event, {"x": state}, None)

    return fold


def test_two_writers_and_a_restart_never_see_a_replaced_skill_state(tmp_path: Path) -> None:
    """Writer A folds agent x's state, writer B (another store on the file) commits a fit
    that replaces it with the same seq: A's next event, by ``apply_skill_many`` and by
    ``apply_skill``, and A reopened, are given B's state, never the one A cached."""
    path = tmp_path / "a.db"
    fleet = FleetSkill(levels={"sql": Estimate(mean=6.0, var=0.5)})

    async def body() -> None:
        first, second = SqliteStore(path), SqliteStore(path)
        seen: list[Mapping[str, AgentSkill]] = []
        try:
            await first.apply_skill_many([("e1", ["x"], _writing("e1", _state(1), seen))])
            fitted = SkillFitCommit({"x": _state(7)}, fleet)
            await second.commit_skill_fit(1, lambda newer: fitted)
            await first.apply_skill_many([("e2", ["x"], _writing("e2", _state(2), seen))])
            await second.commit_skill_fit(2, lambda newer: fitted)
            await first.apply_skill("e3", ["x"], _writing("e3", _state(3), seen))
        finally:
            await first.close()
        reopened = SqliteStore(path)
        try:
            await second.commit_skill_fit(3, lambda newer: fitted)
            await reopened.apply_skill("e4", ["x"], _writing("e4", _state(4), seen))
        finally:
            await reopened.close()
            await second.close()
        assert [s["x"].model_changes for s in seen[1:]] == [7, 7, 7]
        assert seen[0] == {}

    asyncio.run(body())


def _registration(model: str) -> Registration:
    config = AgentConfig(name="ann", provider_id="acme", model_name=model)
    return Registration(config=config, first_seen=1.0, last_seen=2.0)


def test_two_writers_and_a_restart_never_judge_with_a_replaced_registration(
    tmp_path: Path,
) -> None:
    """A judgment takes the agent's model from its registration, read through a cache of
    decoded registrations, and folds the profile the writer keeps by revision: with
    another store on the file registering new models and judging too, and after a
    restart, each judgment is stored with the model registered last and folded onto every
    judgment before it."""
    path = tmp_path / "a.db"

    def judged(contract: str) -> JudgmentRequest:
        return REQUEST.model_copy(update={"contract_id": contract})

    async def body() -> None:
        first, second = SqliteStore(path), SqliteStore(path)
        other = Oracle(second, skill=SkillService(second))
        try:
            oracle = Oracle(first, skill=SkillService(first))
            await first.put_registration(_registration("m1"))
            await oracle.submit_for_judgment(judged("c-1"))
            await second.put_registration(_registration("m2"))
            await other.submit_for_judgment(judged("c-2"))
            await oracle.submit_for_judgment(judged("c-3"))
        finally:
            await first.close()
        reopened = SqliteStore(path)
        try:
            await second.put_registration(_registration("m3"))
            oracle = Oracle(reopened, skill=SkillService(reopened))
            await oracle.submit_for_judgment(judged("c-4"))
            await other.submit_for_judgment(judged("c-5"))
            await reopened.put_registration(_registration("m4"))
            last = await oracle.submit_for_judgment(judged("c-6"))
            events = await reopened.events("ann")
            assert [e.payload.get("model") for e in events] == ["m1", "m2", "m2", "m3", "m3", "m4"]
            assert [e.seq for e in events] == [1, 2, 3, 4, 5, 6]
            assert last.profile.stats.total_tasks == 6
            assert last.profile.xp == sum(int(e.result["total_xp"]) for e in events)
        finally:
            await reopened.close()
            await second.close()

    asyncio.run(body())
