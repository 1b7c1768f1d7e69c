"""Store contract, batches: ``apply_oracle_many`` and ``apply_skill_many`` leave exactly
what applying the same items one at a time leaves, on every store."""

from __future__ import annotations

from typing import Any

from agentladder.domain.replay import ReplayStep, replay
from agentladder.domain.skill import SkillRules
from agentladder.services.skill.evidence import judgment_evidence
from agentladder.services.skill.replay import verify_skills
from agentladder.services.skill.service import SkillService
from agentladder.store.base import OracleItem, Store
from agentladder.store.memory import MemoryStore
from tests.store.builders import RULES, judgment, judgment_commit

CONTRACTS = [("a1", "c-1"), ("a2", "c-1"), ("a1", "c-2"), ("a1", "c-1"), ("a3", "c-9")]
LATER = [("a1", "c-3"), ("a2", "c-1"), ("a2", "c-2"), ("a3", "c-9"), ("a4", "c-1")]


def _items(pairs: list[tuple[str, str]]) -> list[OracleItem]:
    def fold_for(agent: str, contract: str, score: float) -> Any:
        return lambda profile: judgment_commit(profile, judgment(agent, contract, score=score))

    return [(a, c, fold_for(a, c, 5.0 + i % 5)) for i, (a, c) in enumerate(pairs)]


async def _state(store: Store) -> dict[str, Any]:
    agents = ["a1", "a2", "a3", "a4"]
    out: dict[str, Any] = {}
    for agent in agents:
        profile = await store.get_profile(agent)
        events = await store.events(agent)
        ledger = await store.ledger(agent, limit=1000)
        out[agent] = (
            None if profile is None else (profile.value, len(events)),
            [(e.key, e.seq, e.payload_hash, e.lines) for e in events],
            [(e.event, e.xp_awarded, e.contract_id) for e in ledger],
        )
    return out


def test_oracle_batches_equal_one_at_a_time(with_store: Any) -> None:
    """Two batches (a key repeated inside one, keys of the first repeated in the second):
    each outcome as apply_oracle gives it, in order; events, ledger and profiles equal."""

    async def body(store: Store) -> None:
        reference = MemoryStore()
        expected = [await reference.apply_oracle(a, k, f) for a, k, f in _items(CONTRACTS)]
        expected += [await reference.apply_oracle(a, k, f) for a, k, f in _items(LATER)]
        got = await store.apply_oracle_many(_items(CONTRACTS))
        got += await store.apply_oracle_many(_items(LATER))
        assert [None if o is None else (o.created, o.event.key, o.event.seq) for o in got] == [
            None if o is None else (o.created, o.event.key, o.event.seq) for o in expected
        ]
        assert [o.profile for o in got if o] == [o.profile for o in expected if o]
        assert await _state(store) == await _state(reference)
        for agent in ("a1", "a2", "a3", "a4"):
            events = await store.events(agent)
            rebuilt, _ = replay(agent, [ReplayStep(e.kind, e.payload, e.at) for e in events], RULES)
            stored = await store.get_profile(agent)
            assert stored is not None
            assert stored.value == rebuilt
            assert stored.revision >= len(events)

    with_store(body)


def test_an_empty_oracle_batch_writes_nothing(with_store: Any) -> None:
    """No items: no outcome, no profile."""

    async def body(store: Store) -> None:
        assert await store.apply_oracle_many([]) == []
        assert await store.list_profiles() == []

    with_store(body)


def test_skill_batches_equal_one_at_a_time(with_store: Any) -> None:
    """Judgment evidence in two batches (a key repeated): the log's keys, its order and
    every state equal observing them one by one, and the replay of the log."""

    async def body(store: Store) -> None:
        rules = SkillRules()
        evidence = [
            judgment_evidence(f"a{i % 3}", f"c-{i % 7}", "sql", float(i % 11), i % 4 != 0, 1e9 + i)
            for i in range(12)
        ]
        reference = SkillService(MemoryStore(), rules)
        expected = [await reference.observe(e) for e in evidence]
        service = SkillService(store, rules)
        got = await service.observe_many(evidence[:8])
        got += await service.observe_many(evidence[8:] + evidence[:2])
        expected += [await reference.observe(e) for e in evidence[:2]]
        assert [(a.created, a.event.key) for a in got] == [
            (a.created, a.event.key) for a in expected
        ]
        seqs = {a.event.key: a.event.seq for a in got if a.created}
        assert list(seqs.values()) == sorted(set(seqs.values()))  # in order, gaps allowed
        assert all(a.event.seq == seqs[a.event.key] for a in got)  # a repeat: the first's
        assert await store.list_skills() == await reference.store.list_skills()
        assert await store.get_fleet_skill() == await reference.store.get_fleet_skill()
        report = await verify_skills(store, rules)
        assert report.differences == []
        assert report.events_replayed == 12  # twelve distinct keys

    with_store(body)
