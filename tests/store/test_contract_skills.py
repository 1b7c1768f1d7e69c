"""Store contract, skills: one ordered log applied once per key, states rebuilt exactly by
replay, on every store; two NATS instances agree."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from agentladder.domain.skill import AgentSkill, FleetSkill, SkillRules
from agentladder.errors import PayloadConflict
from agentladder.services.skill.replay import verify_skills
from agentladder.services.skill.service import SkillService
from agentladder.store.base import Store
from agentladder.store.skills import SkillCommit, SkillEvent
from agentladder.store.url import open_store
from tests.domain.skill_helpers import deliberations, honest

TRUTH = {"a": 4.0, "b": 5.5, "c": 6.5, "d": 8.0}
EVENTS = deliberations(TRUTH, 12, honest(0.5), seed=4, size=3)


def test_an_event_is_applied_once_per_key(with_store: Any) -> None:
    """The same key twice: stored once, the fold not called again, seq 1 kept."""

    async def body(store: Store) -> None:
        calls = []

        def fold(states: Mapping[str, AgentSkill], fleet: FleetSkill) -> SkillCommit:
            calls.append(dict(states))
            event = SkillEvent(key="k", kind="judgment", payload="{}", payload_hash="h", at=1.0)
            return SkillCommit(event, {}, None)

        first = await store.apply_skill("k", ["a"], fold)
        again = await store.apply_skill("k", ["a"], fold)
        assert first.created
        assert not again.created
        assert first.event.seq == again.event.seq == 1
        assert len(calls) == 1
        assert [e.key for e in await store.skill_events()] == ["k"]

    with_store(body)


def test_replay_rebuilds_every_state_exactly(with_store: Any) -> None:
    """Deliberations through the service: seq 1..n without gaps, and replaying the log
    gives the stored states and the fleet's to the last bit."""

    async def body(store: Store) -> None:
        skill = SkillService(store)
        for event in EVENTS:
            await skill.observe(event)
        log = await store.skill_events(limit=5)
        assert [e.seq for e in log] == [1, 2, 3, 4, 5]
        rest = await store.skill_events(after=5)
        assert [e.seq for e in rest] == list(range(6, len(EVENTS) + 1))
        report = await verify_skills(store, SkillRules())
        assert report.events_replayed == len(EVENTS)
        assert report.agents_checked == len(TRUTH)
        assert report.differences == []
        board = await skill.board("code_review")
        assert {e.agent_id for e in board} == set(TRUTH)

    with_store(body)


def test_a_page_starts_right_after_any_seq(with_store: Any) -> None:
    """Pages read from any point (in order, backwards, past the end) hold exactly the
    events after it, and reading on page by page gives every event once."""

    async def body(store: Store) -> None:
        skill = SkillService(store)
        for event in EVENTS:
            await skill.observe(event)
        total = len(EVENTS)
        for after in [*range(total, -1, -1), 3, 3, total + 5]:
            page = await store.skill_events(after=after, limit=2)
            assert [e.seq for e in page] == list(range(after + 1, min(after + 2, total) + 1))
        seen, after = [], 0
        while page := await store.skill_events(after=after, limit=3):
            seen.extend(e.seq for e in page)
            after = page[-1].seq
        assert seen == list(range(1, total + 1))

    with_store(body)


def test_a_changed_payload_under_a_known_key_is_a_conflict(with_store: Any) -> None:
    """The same deliberation id with other scores: PayloadConflict, nothing applied."""

    async def body(store: Store) -> None:
        skill = SkillService(store)
        await skill.observe(EVENTS[0])
        changed = EVENTS[1].model_copy(update={"key": EVENTS[0].key})
        with pytest.raises(PayloadConflict):
            await skill.observe(changed)
        assert len(await store.skill_events()) == 1

    with_store(body)


def test_states_survive_a_restart(store_url: str) -> None:
    """Closed and opened again (memory excepted: it keeps nothing), the states and the
    log are the same and replay still equals them."""
    if store_url == "memory://":
        return

    async def main() -> None:
        store = await open_store(store_url)
        try:
            skill = SkillService(store)
            for event in EVENTS:
                await skill.observe(event)
            before = await store.list_skills()
        finally:
            await store.close()
        store = await open_store(store_url)
        try:
            assert await store.list_skills() == before
            assert (await verify_skills(store, SkillRules())).differences == []
        finally:
            await store.close()

    asyncio.run(main())


def test_two_nats_instances_append_one_log_and_agree(nats_store_url: str) -> None:
    """Two stores on one NATS apply 24 deliberations concurrently: one gapless log, the
    same states read from both, equal to the replay."""
    events = deliberations(TRUTH, 24, honest(0.5), seed=8, size=3)

    async def main() -> None:
        one, two = await open_store(nats_store_url), await open_store(nats_store_url)
        try:
            first, second = SkillService(one), SkillService(two)
            await asyncio.gather(
                *((first if i % 2 else second).observe(event) for i, event in enumerate(events))
            )
            log = await one.skill_events(limit=100)
            assert [e.seq for e in log] == list(range(1, 25))
            assert {e.key for e in log} == {e.key for e in events}
            assert await one.list_skills() == await two.list_skills()
            assert await one.get_fleet_skill() == await two.get_fleet_skill()
            assert (await verify_skills(two, SkillRules())).differences == []
        finally:
            await one.close()
            await two.close()

    asyncio.run(main())
