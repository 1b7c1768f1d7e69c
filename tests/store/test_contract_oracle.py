"""Store contract, Oracle: atomic commits of event + ledger + profile, idempotency, replay."""

from __future__ import annotations

import asyncio
import functools
from typing import Any

import pytest

from agentladder.domain.replay import ReplayStep, replay
from agentladder.errors import AlreadyApplied, InvalidInput, RevisionConflict
from agentladder.store.base import Store
from agentladder.store.retry import retry_on_conflict
from tests.store.builders import RULES, award, judgment, judgment_commit


def test_first_commit_creates_the_profile_event_and_ledger(with_store: Any) -> None:
    """A commit at revision 0 stores the profile, the event (seq 1) and each ledger line."""

    async def body(store: Store) -> None:
        commit = judgment_commit(None, judgment("a1", "c-1", retries=1))
        revision = await store.commit_oracle(commit, 0)
        got = await store.get_profile("a1")
        assert got is not None
        assert got.revision == revision
        assert got.value == commit.profile
        event = await store.get_event("a1", "c-1")
        assert event is not None
        assert event.seq == 1
        assert event.result == commit.event.result
        ledger = await store.ledger("a1")
        assert [(e.event, e.xp_awarded) for e in ledger] == [
            ("task_completed", 10),
            ("quality_above_8", 15),
            ("under_budget", 10),
            ("achievement:first_steps", 10),
        ]
        assert {e.contract_id for e in ledger} == {"c-1"}

    with_store(body)


def test_duplicate_key_is_refused_with_the_stored_event(with_store: Any) -> None:
    """The same (agent, key) twice raises AlreadyApplied with the first event; nothing changes."""

    async def body(store: Store) -> None:
        first = judgment_commit(None, judgment("a1", "c-1"))
        revision = await store.commit_oracle(first, 0)
        again = judgment_commit(first.profile, judgment("a1", "c-1", score=2.0))
        with pytest.raises(AlreadyApplied) as caught:
            await store.commit_oracle(again, revision)
        stored = caught.value.existing
        assert stored is not None
        assert getattr(stored, "payload_hash", None) == first.event.payload_hash
        got = await store.get_profile("a1")
        assert got is not None
        assert got.revision == revision
        assert got.value == first.profile
        assert len(await store.ledger("a1")) == len(first.event.lines)

    with_store(body)


def test_same_key_for_another_agent_is_independent(with_store: Any) -> None:
    """Idempotency keys are per agent: two agents may use the same contract id."""

    async def body(store: Store) -> None:
        await store.commit_oracle(judgment_commit(None, judgment("a1", "c-1")), 0)
        await store.commit_oracle(judgment_commit(None, judgment("a2", "c-1")), 0)
        assert [p.id for p in await store.list_profiles()] == ["a1", "a2"]

    with_store(body)


def test_stale_profile_revision_writes_nothing(with_store: Any) -> None:
    """A commit on an old revision raises RevisionConflict: no event, no ledger line written."""

    async def body(store: Store) -> None:
        first = judgment_commit(None, judgment("a1", "c-1"))
        await store.commit_oracle(first, 0)
        with pytest.raises(RevisionConflict):
            await store.commit_oracle(judgment_commit(None, judgment("a1", "c-2")), 0)
        assert await store.get_event("a1", "c-2") is None
        assert len(await store.ledger("a1")) == len(first.event.lines)
        assert [e.key for e in await store.events("a1")] == ["c-1"]

    with_store(body)


def test_concurrent_awards_to_one_agent_lose_nothing_and_replay_equal(with_store: Any) -> None:
    """40 concurrent judgments with retry: 40 events in order, XP exact, replay equals profile."""

    async def body(store: Store) -> None:
        items = [
            judgment("a1", f"c-{i}", score=float(i % 11), task_type=f"t{i % 3}") for i in range(40)
        ]
        await asyncio.gather(
            *(retry_on_conflict(functools.partial(award, store, it), op="award") for it in items)
        )
        events = await store.events("a1")
        assert sorted(e.key for e in events) == sorted(i.contract_id for i in items)
        assert [e.seq for e in events] == list(range(1, 41))
        stored = await store.get_profile("a1")
        rebuilt, lines = replay("a1", [ReplayStep(e.kind, e.payload, e.at) for e in events], RULES)
        assert stored is not None
        assert rebuilt == stored.value
        ledger = await store.ledger("a1", limit=1000)
        assert [(e.event, e.xp_awarded) for e in ledger] == [(ln.event, ln.xp) for ln in lines]
        assert sum(e.xp_awarded for e in ledger) == stored.value.xp

    with_store(body)


def test_ledger_pages(with_store: Any) -> None:
    """ledger(offset, limit) pages through the lines oldest first."""

    async def body(store: Store) -> None:
        for i in range(5):
            await award(store, judgment("a1", f"c-{i}"))
        whole = await store.ledger("a1", limit=1000)
        pages = [await store.ledger("a1", offset=o, limit=3) for o in range(0, len(whole), 3)]
        assert [e for page in pages for e in page] == whole
        assert [e.id for e in whole] == sorted(e.id for e in whole)

    with_store(body)


def test_leaderboard_orders_by_xp_then_average_score_then_id(with_store: Any) -> None:
    """Overall and per task type, ties broken by average score, then agent id; limit honoured."""

    async def body(store: Store) -> None:
        await award(store, judgment("b", "1", score=9.5))  # 10+5+25+10 +10 first steps
        await award(store, judgment("a", "1", score=9.5))  # same XP, same score: a before b
        await award(store, judgment("c", "1", score=9.5, task_type="poetry"))
        await award(store, judgment("d", "1", score=8.5, cost=0.05))  # less XP
        await award(store, judgment("e", "1", score=9.1, task_type="poetry", budget=None))
        rows = await store.leaderboard(None, 10)
        assert [r.agent_id for r in rows] == ["a", "b", "c", "e", "d"]
        assert [r.position for r in rows] == [1, 2, 3, 4, 5]
        assert rows[0].xp == 60
        assert rows[0].tasks == 1
        assert rows[0].average_score == 9.5
        poetry = await store.leaderboard("poetry", 10)
        assert [(r.agent_id, r.specialization_xp, r.task_type) for r in poetry] == [
            ("c", 50, "poetry"),
            ("e", 40, "poetry"),
        ]
        assert [r.agent_id for r in await store.leaderboard(None, 2)] == ["a", "b"]
        assert await store.leaderboard("unknown_type", 5) == []

    with_store(body)


@pytest.mark.parametrize("limit", [0, 1001, -1])
def test_leaderboard_limit_is_1_to_1000(with_store: Any, limit: int) -> None:
    """A limit outside 1..1000 is refused naming the field."""

    async def body(store: Store) -> None:
        with pytest.raises(InvalidInput) as caught:
            await store.leaderboard(None, limit)
        assert caught.value.field == "limit"

    with_store(body)


def test_apply_oracle_folds_once_per_key(with_store: Any) -> None:
    """apply_oracle commits a new key, returns the stored event for a repeat without folding."""

    async def body(store: Store) -> None:
        calls: list[str] = []

        def fold_for(contract: str) -> Any:
            def fold(profile: Any) -> Any:
                calls.append(contract)
                return judgment_commit(profile, judgment("a1", contract))

            return fold

        first = await store.apply_oracle("a1", "c-1", fold_for("c-1"))
        assert first is not None
        assert first.created
        assert first.event.seq == 1
        again = await store.apply_oracle("a1", "c-1", fold_for("c-1"))
        assert again is not None
        assert not again.created
        assert again.event == first.event
        assert again.profile == first.profile
        assert calls == ["c-1"]
        assert await store.apply_oracle("a1", "c-2", lambda profile: None) is None
        assert [e.key for e in await store.events("a1")] == ["c-1"]

    with_store(body)


def test_apply_oracle_under_concurrency_loses_nothing(with_store: Any) -> None:
    """30 concurrent applies on one agent (some repeated keys): each key once, profile == replay."""

    async def body(store: Store) -> None:
        def fold_for(contract: str) -> Any:
            return lambda profile: judgment_commit(profile, judgment("a1", contract))

        keys = [f"c-{i % 20}" for i in range(30)]
        results = await asyncio.gather(*(store.apply_oracle("a1", k, fold_for(k)) for k in keys))
        assert sum(1 for r in results if r is not None and r.created) == 20
        events = await store.events("a1")
        assert sorted(e.key for e in events) == sorted({*keys})
        rebuilt, _ = replay("a1", [ReplayStep(e.kind, e.payload, e.at) for e in events], RULES)
        stored = await store.get_profile("a1")
        assert stored is not None
        assert stored.value == rebuilt

    with_store(body)


def test_task_types_are_those_some_profile_specializes_in(with_store: Any) -> None:
    """An empty store has none; after judgments of two agents, the union of their task
    types, each once."""

    async def body(store: Store) -> None:
        assert await store.task_types() == frozenset()
        for agent, contract, task_type in (("a1", "c1", "sql"), ("a1", "c2", "code"),
                                           ("a2", "c1", "sql"), ("a2", "c2", "law")):  # fmt: skip
            await award(store, judgment(agent, contract, task_type=task_type))
        assert await store.task_types() == frozenset({"sql", "code", "law"})

    with_store(body)
