"""Store contract, skills: one ordered log applied once per key (seqs increasing, gaps
allowed), states rebuilt exactly by replay, on every store; two NATS instances agree."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from agentladder.domain.skill import AgentSkill, Estimate, FleetSkill, SkillRules
from agentladder.domain.skill.state import new_skill
from agentladder.errors import PayloadConflict
from agentladder.services.clock import FixedClock
from agentladder.services.skill.replay import verify_skills
from agentladder.services.skill.service import SkillService
from agentladder.store.base import Store
from agentladder.store.skills import SkillCommit, SkillEvent, SkillFitCommit
from agentladder.store.url import open_store
from tests.domain.skill_helpers import deliberations, honest

TRUTH = {"a": 4.0, "b": 5.5, "c": 6.5, "d": 8.0}
EVENTS = deliberations(TRUTH, 12, honest(0.5), seed=4, size=3)


def test_an_event_is_applied_once_per_key(with_store: Any) -> None:
    """The same key twice: stored once, the fold not called again, its seq kept."""

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
        assert first.event.seq == again.event.seq >= 1
        assert len(calls) == 1
        assert [e.key for e in await store.skill_events()] == ["k"]

    with_store(body)


def test_replay_rebuilds_every_state_exactly(with_store: Any) -> None:
    """Deliberations through the service: seqs increasing in the order applied, paged by
    the last seq seen, and replaying the log gives the stored states to the last bit."""

    async def body(store: Store) -> None:
        skill = SkillService(store)
        for event in EVENTS:
            await skill.observe(event)
        log = await store.skill_events(limit=5)
        assert [e.key for e in log] == [e.key for e in EVENTS[:5]]
        rest = await store.skill_events(after=log[-1].seq)
        assert [e.key for e in rest] == [e.key for e in EVENTS[5:]]
        seqs = [e.seq for e in (*log, *rest)]
        assert seqs == sorted(set(seqs))
        assert seqs[0] >= 1
        report = await verify_skills(store, SkillRules())
        assert report.events_replayed == len(EVENTS)
        assert report.agents_checked == len(TRUTH)
        assert report.differences == []
        board = await skill.board("code_review")
        assert {e.agent_id for e in board} == set(TRUTH)

    with_store(body)


def test_a_page_starts_right_after_any_seq(with_store: Any) -> None:
    """Pages read from any point (every seq and every number between two seqs, backwards,
    past the end) hold exactly the events after it, and reading on page by page gives
    every event once."""

    async def body(store: Store) -> None:
        skill = SkillService(store)
        for event in EVENTS:
            await skill.observe(event)
        seqs = [e.seq for e in await store.skill_events(limit=1000)]
        assert len(seqs) == len(EVENTS)
        last = seqs[-1]
        for after in [*range(last + 1, -1, -1), 3, 3, last + 5]:
            page = await store.skill_events(after=after, limit=2)
            assert [e.seq for e in page] == [s for s in seqs if s > after][:2]
        seen: list[int] = []
        after = 0
        while page := await store.skill_events(after=after, limit=3):
            seen.extend(e.seq for e in page)
            after = page[-1].seq
        assert seen == seqs

    with_store(body)


def test_the_events_after_any_seq_are_counted(with_store: Any) -> None:
    """``count_skill_events(after=)`` equals the events a read past that point gives, from
    every seq, every number between two seqs and past the end; a fit's seq counts what it
    left for the next fit (none right after it)."""

    async def body(store: Store) -> None:
        assert await store.count_skill_events() == 0
        skill = SkillService(store)
        for event in EVENTS[:5]:
            await skill.observe(event)
        assert (await skill.fit()).ran
        fleet = await store.get_fleet_skill()
        assert fleet.fit is not None
        assert await store.count_skill_events(after=fleet.fit.seq) == 0
        for event in EVENTS[5:]:
            await skill.observe(event)
        seqs = [e.seq for e in await store.skill_events(limit=1000)]
        assert await store.count_skill_events(after=fleet.fit.seq) == len(EVENTS) - 5
        assert await store.count_skill_events() == len(EVENTS)
        for after in [*range(seqs[-1] + 2), seqs[-1] + 100]:
            assert await store.count_skill_events(after=after) == sum(s > after for s in seqs)

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
    """Two stores on one NATS apply 24 deliberations concurrently: one log (seqs
    increasing, every key once), the same states read from both, equal to the replay."""
    events = deliberations(TRUTH, 24, honest(0.5), seed=8, size=3)

    async def main() -> None:
        one, two = await open_store(nats_store_url), await open_store(nats_store_url)
        try:
            first, second = SkillService(one), SkillService(two)
            await asyncio.gather(
                *((first if i % 2 else second).observe(event) for i, event in enumerate(events))
            )
            log = await one.skill_events(limit=100)
            assert [e.seq for e in log] == sorted({e.seq for e in log})
            assert sorted(e.key for e in log) == sorted(e.key for e in events)
            assert await one.list_skills() == await two.list_skills()
            assert await one.get_fleet_skill() == await two.get_fleet_skill()
            assert (await verify_skills(two, SkillRules())).differences == []
        finally:
            await one.close()
            await two.close()

    asyncio.run(main())


def test_a_fit_replaces_every_state_and_verify_rebuilds_it_with_the_steps_after(
    with_store: Any,
) -> None:
    """Evidence, a fit, more evidence: the states are the fit's with the later events'
    filter steps on them, and verify rebuilds exactly that (no differences) before and
    after a second fit; a fit with nothing new does not run."""

    async def body(store: Store) -> None:
        skill = SkillService(store)
        for event in EVENTS[:8]:
            await skill.observe(event)
        first = await skill.fit()
        assert first.ran
        eighth = (await store.skill_events())[7].seq
        assert first.seq == eighth
        fleet = await store.get_fleet_skill()
        assert fleet.fit is not None
        assert fleet.fit.seq == eighth
        for event in EVENTS[8:]:
            await skill.observe(event)
        report = await verify_skills(store, SkillRules())
        assert report.differences == []
        assert report.fit_pending == len(EVENTS) - 8
        assert (await skill.fit()).ran
        assert not (await skill.fit()).ran
        again = await verify_skills(store, SkillRules())
        assert again.differences == []
        assert again.fit_pending == 0

    with_store(body)


def test_a_fit_commit_folds_on_what_was_applied_while_it_ran(with_store: Any) -> None:
    """A fit of the log up to its fourth event committed after 8 events: the fold gets
    events 5 to 8 in order, and what it builds is what the store then holds."""

    async def body(store: Store) -> None:
        skill = SkillService(store)
        for event in EVENTS[:8]:
            await skill.observe(event)
        seen: list[int] = []
        marker = FleetSkill(levels={"marker": Estimate(mean=1.0, var=1.0)})

        def fold(newer: Sequence[SkillEvent]) -> SkillFitCommit:
            seen[:] = [e.seq for e in newer]
            return SkillFitCommit({"only": new_skill("only", SkillRules())}, marker)

        log = await store.skill_events()
        await store.commit_skill_fit(log[3].seq, fold)
        assert seen == [e.seq for e in log[4:]]
        assert [s.agent_id for s in await store.list_skills()] == ["only"]
        assert (await store.get_fleet_skill()).levels == marker.levels

    with_store(body)


def test_the_same_evidence_in_another_order_fits_to_the_same_states(store_url: str) -> None:
    """Two stores of one backend given the same events in opposite orders agree after a
    fit, state for state (memory, SQLite and NATS alike)."""
    if store_url.startswith("sqlite"):
        other_url = store_url.replace(".db", "-other.db")
    elif store_url.startswith("nats"):
        other_url = store_url.replace("prefix=t", "prefix=o").replace("ranks_", "ranks_o")
    else:
        other_url = store_url

    async def main() -> None:
        one, two = await open_store(store_url), await open_store(other_url)
        try:
            for store, events in ((one, EVENTS), (two, EVENTS[::-1])):
                skill = SkillService(store, clock=FixedClock())
                for event in events:
                    await skill.observe(event)
                await skill.fit()
            first = {s.agent_id: s for s in await one.list_skills()}
            second = {s.agent_id: s for s in await two.list_skills()}
            assert first == second
            assert (await one.get_fleet_skill()).levels == (await two.get_fleet_skill()).levels
        finally:
            await one.close()
            await two.close()

    asyncio.run(main())
