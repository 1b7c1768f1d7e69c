"""The skill queue on NATS (``skill_queue=on``): judgments' skill evidence queued before
their award, bounded, applied once per key by one leased applier per shard; the shard
leases, the queue's state (depth and lag) and the share of shards per instance."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from datetime import UTC, datetime

import pytest

from agentladder.domain.rules import OracleRules
from agentladder.domain.skill import ScoreEvidence, SkillRules
from agentladder.errors import InvalidInput, SkillQueueFull
from agentladder.services.clock import FixedClock, SystemClock
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.service import Oracle
from agentladder.services.skill.applier import SkillApplier, first_shard, share
from agentladder.services.skill.replay import verify_skills
from agentladder.services.skill.service import SkillService
from agentladder.store.base import Store
from agentladder.store.nats.config import parse_nats_url
from agentladder.store.skillqueue import QueueState, SkillQueue, shard_of
from agentladder.store.url import open_store

QUEUED = "&skill_queue=on&skill_queue_shards=4&skill_queue_lease_s=2"


def _evidence(agent: str, contract: str, score: float = 7.0) -> ScoreEvidence:
    key = f"judgment:{agent}:{contract}"
    return ScoreEvidence(key=key, at=time.time(), agent_id=agent, task_type="t", score=score)


def _request(agent: str, contract: str, score: float = 6.5) -> JudgmentRequest:
    return JudgmentRequest(agent_id=agent, contract_id=contract, task_type="code", score=score)


def _queue(skill: SkillService) -> SkillQueue:
    assert skill.queue is not None
    return skill.queue


async def _judgment_keys(store: Store) -> Counter[str]:
    events = await store.skill_events(limit=100_000)
    return Counter(e.key for e in events if e.key.startswith("judgment:"))


def test_the_queue_options_are_read_and_checked() -> None:
    options = parse_nats_url("nats://h:4222?skill_queue=on&skill_queue_max_msgs=5")
    assert options.skill_queue is not None
    assert (options.skill_queue.max_msgs, options.skill_queue.shards) == (5, 4)
    assert "skill_queue=on" in options.url
    assert parse_nats_url("nats://h:4222").skill_queue is None
    assert "skill_queue" not in parse_nats_url("nats://h:4222").url
    for bad in ("skill_queue=yes", "skill_queue=on&skill_queue_shards=0"):
        with pytest.raises(InvalidInput, match="skill_queue"):
            parse_nats_url(f"nats://h:4222?{bad}")


def test_shards_and_shares_are_stable_and_spread() -> None:
    assert shard_of("agent-1", 4) == shard_of("agent-1", 4)
    assert len({shard_of(f"agent-{n}", 4) for n in range(100)}) == 4
    assert [share(4, n) for n in (0, 1, 2, 3, 4, 5)] == [4, 4, 2, 2, 1, 1]
    assert 0 <= first_shard("instance-a", 4) < 4
    assert QueueState(0, None).lag_s(100.0) == 0.0
    assert QueueState(3, 90.0).lag_s(100.0) == 10.0
    assert QueueState(3, 110.0).lag_s(100.0) == 0.0  # another clock ahead: never negative


def test_a_full_queue_refuses_and_a_repeat_is_dropped(nats_store_url: str) -> None:
    """Bound 3: a repeated key is dropped by the server (position 0, the depth unchanged),
    the fourth evidence refused (``SkillQueueFull``, counted); the depth and the oldest
    evidence's age say what waits; an applier empties it, each key applied once."""

    async def main() -> None:
        store = await open_store(nats_store_url + "&skill_queue=on&skill_queue_max_msgs=3")
        try:
            skill = SkillService(store)
            queue = _queue(skill)
            assert (await queue.state()) == QueueState(0, None)
            before = time.time()
            positions = [await skill.enqueue(_evidence("a", f"c{n}")) for n in range(3)]
            assert all(positions)
            assert positions == sorted(positions)
            assert await skill.enqueue(_evidence("a", "c0")) == 0  # the server's duplicate
            state = await queue.state()
            assert state.depth == 3
            assert state.oldest_at is not None
            checked = time.time()  # the oldest was made after ``before``: its age at most this
            assert 0 <= state.lag_s(checked) <= checked - before
            with pytest.raises(SkillQueueFull):
                await skill.enqueue(_evidence("b", "c9"))
            assert queue.refused == 1
            assert (await skill.freshness()).pending == 3  # queued counts as pending
            applier = SkillApplier(queue, skill, "one", SystemClock())
            await applier.start()
            try:
                await skill.drained(timeout_s=30)
            finally:
                await applier.stop()
            assert applier.applied == 3
            assert (await queue.state()) == QueueState(0, None)
            assert await _judgment_keys(store) == Counter(f"judgment:a:c{n}" for n in range(3))
        finally:
            await store.close()

    asyncio.run(main())


def test_shard_leases_are_exclusive_until_they_end(nats_store_url: str) -> None:
    async def main() -> None:
        store = await open_store(nats_store_url + QUEUED)
        try:
            queue = _queue(SkillService(store))
            now = time.time()
            assert await queue.take(0, "a", now + 10, now)
            assert await queue.take(0, "a", now + 20, now)  # a renewal
            assert not await queue.take(0, "b", now + 10, now)
            assert await queue.holders(now) == {0: "a"}
            assert await queue.take(0, "b", now + 40, now + 25)  # a's has ended
            await queue.release(0, "a")  # not a's any more: left alone
            assert await queue.holders(now + 25) == {0: "b"}
            await queue.release(0, "b")
            assert await queue.holders(now) == {}
            assert await queue.present("a", now + 10, now) == 1
            assert await queue.present("b", now + 10, now) == 2
            await queue.absent("a")
            assert await queue.present("b", now + 10, now) == 1
        finally:
            await store.close()

    asyncio.run(main())


def test_two_appliers_share_the_shards_and_one_takes_all_when_the_other_stops(
    nats_store_url: str,
) -> None:
    """Passes run by hand (leases of 60 s: none ends meanwhile, however slow the machine):
    the first instance takes every shard alone; once a second is present the first gives
    up what is past its share and the second takes it; once the first stops, the second
    holds every shard; evidence queued throughout is applied once each."""

    async def main() -> None:
        url = nats_store_url + "&skill_queue=on&skill_queue_shards=4&skill_queue_lease_s=60"
        stores = [await open_store(url) for _ in range(2)]
        skills = [SkillService(store) for store in stores]
        first, second = (
            SkillApplier(_queue(skill), skill, name, SystemClock())
            for skill, name in zip(skills, ("first", "second"), strict=True)
        )
        try:
            await first.one_pass()
            assert first.held == {0, 1, 2, 3}
            for n in range(40):
                await skills[n % 2].enqueue(_evidence(f"agent-{n % 7}", f"c{n}"))
            await second.one_pass()
            assert second.held == frozenset()  # every shard is held
            await first.one_pass()
            await second.one_pass()
            assert len(first.held) == len(second.held) == 2
            assert first.held | second.held == {0, 1, 2, 3}
            for n in range(40, 80):
                await skills[n % 2].enqueue(_evidence(f"agent-{n % 7}", f"c{n}"))
            await first.stop()
            await second.one_pass()
            assert second.held == {0, 1, 2, 3}
            await skills[1].drained(timeout_s=30)
            await second.stop()
            keys = await _judgment_keys(stores[0])
            assert len(keys) == 80
            assert set(keys.values()) == {1}
            assert not (await verify_skills(stores[0], SkillRules())).differences
        finally:
            for applier in (first, second):  # their loops end before the stores close
                await applier.stop()
            for store in stores:
                await store.close()

    asyncio.run(main())


def test_judgments_are_queued_then_applied_once_and_replay_agrees(nats_store_url: str) -> None:
    """Through the Oracle: a judgment's answer does not wait for its skill (nothing is
    applied before the applier runs; the evidence is pending meanwhile), repeats add
    nothing, and once applied the log holds each judgment once and replays to the
    stored states (``oracle verify``)."""

    async def main() -> None:
        store = await open_store(nats_store_url + QUEUED)
        try:
            skill = SkillService(store)
            oracle = Oracle(store, OracleRules(accept_unregistered=True), skill=skill)
            for n in range(30):
                result = await oracle.submit_for_judgment(_request(f"agent-{n % 5}", f"c{n}"))
                assert result.total_xp > 0  # the award is answered at once
            for n in range(0, 30, 3):  # repeats
                await oracle.submit_for_judgment(_request(f"agent-{n % 5}", f"c{n}"))
            assert await store.get_skills([f"agent-{n}" for n in range(5)]) == {}
            assert (await skill.freshness()).pending == 30
            applier = SkillApplier(_queue(skill), skill, "one", SystemClock())
            await applier.start()
            try:
                await skill.drained(timeout_s=30)
            finally:
                await applier.stop()
            keys = await _judgment_keys(store)
            assert len(keys) == 30
            assert set(keys.values()) == {1}
            assert len(await store.get_skills([f"agent-{n}" for n in range(5)])) == 5
            assert not (await verify_skills(store, SkillRules())).differences
        finally:
            await store.close()

    asyncio.run(main())


def test_a_full_queue_refuses_a_judgment_before_its_award(nats_store_url: str) -> None:
    """Bound 2 and no applier: the third judgment is refused (``SkillQueueFull``) with no
    award stored; once applied, the same judgment retried is accepted and applied once."""

    async def main() -> None:
        store = await open_store(nats_store_url + QUEUED + "&skill_queue_max_msgs=2")
        try:
            skill = SkillService(store)
            oracle = Oracle(store, OracleRules(accept_unregistered=True), skill=skill)
            await oracle.submit_for_judgment(_request("agent-a", "c1"))
            await oracle.submit_for_judgment(_request("agent-a", "c2"))
            before = await store.get_profile("agent-a")
            with pytest.raises(SkillQueueFull):
                await oracle.submit_for_judgment(_request("agent-a", "c3"))
            assert await store.get_event("agent-a", "judgment:c3") is None
            assert await store.get_profile("agent-a") == before
            applier = SkillApplier(_queue(skill), skill, "one", SystemClock())
            await applier.start()
            try:
                await skill.drained(timeout_s=30)
                await oracle.submit_for_judgment(_request("agent-a", "c3"))
                await skill.drained(timeout_s=30)
            finally:
                await applier.stop()
            keys = await _judgment_keys(store)
            assert sorted(keys) == [f"judgment:agent-a:c{n}" for n in (1, 2, 3)]
            assert set(keys.values()) == {1}
        finally:
            await store.close()

    asyncio.run(main())


def test_an_applier_whose_lease_lapsed_applies_again_once_renewed(nats_store_url: str) -> None:
    """Its clock past its shards' leases (renewals that failed, e.g. while a cluster lost
    a node): its loops pause, stay held, and apply again once a pass renews the leases."""

    async def main() -> None:
        store = await open_store(nats_store_url + QUEUED)
        try:
            skill = SkillService(store)
            clock = FixedClock(datetime.now(UTC))
            applier = SkillApplier(_queue(skill), skill, "one", clock)
            try:
                await applier.one_pass()
                assert applier.held == {0, 1, 2, 3}
                clock.advance(10)  # every lease (2 s) has ended by the applier's clock
                for n in range(12):
                    await skill.enqueue(_evidence(f"agent-{n % 5}", f"c{n}"))
                await applier.one_pass()  # renewed: nobody else took them
                assert applier.held == {0, 1, 2, 3}
                await skill.drained(timeout_s=30)
            finally:
                await applier.stop()
            assert len(await _judgment_keys(store)) == 12
        finally:
            await store.close()

    asyncio.run(main())
