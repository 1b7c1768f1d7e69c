"""The skill queue on NATS (``skill_queue=on``): a judgment's award carries its skill
evidence (one write: both or neither), bounded, applied once per key by the one leased
applier; the lease, the queue's state (depth and lag) and its handover."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime

import pytest
from nats.js.api import DeliverPolicy

import nats
from agentladder.domain.rules import OracleRules
from agentladder.domain.skill import SkillRules
from agentladder.errors import InvalidInput, SkillQueueFull
from agentladder.services.clock import FixedClock, SystemClock
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.service import Oracle
from agentladder.services.skill.applier import SkillApplier, first_shard, share
from agentladder.services.skill.replay import verify_skills
from agentladder.services.skill.service import SkillService
from agentladder.store.base import Store
from agentladder.store.nats.config import parse_nats_url
from agentladder.store.nats.skillqueue import APPLIER
from agentladder.store.skillqueue import QueueState, SkillQueue
from agentladder.store.url import open_store

QUEUED = "&skill_queue=on&skill_queue_lease_s=2"


def _request(agent: str, contract: str, score: float = 6.5) -> JudgmentRequest:
    return JudgmentRequest(agent_id=agent, contract_id=contract, task_type="code", score=score)


def _queue(skill: SkillService) -> SkillQueue:
    assert skill.queue is not None
    return skill.queue


def _oracle(store: Store) -> tuple[Oracle, SkillService]:
    skill = SkillService(store)
    return Oracle(store, OracleRules(accept_unregistered=True), skill=skill), skill


async def _judgment_keys(store: Store) -> Counter[str]:
    events = await store.skill_events(limit=100_000)
    return Counter(e.key for e in events if e.key.startswith("judgment:"))


def test_the_queue_options_are_read_and_checked() -> None:
    options = parse_nats_url("nats://h:4222?skill_queue=on&skill_queue_max_msgs=5")
    assert options.skill_queue is not None
    assert (options.skill_queue.max_msgs, options.skill_queue.lease_s) == (5, 10.0)
    assert options.skill_queue.in_serve  # serve runs an applier unless told apart
    assert "skill_queue=on" in options.url
    assert parse_nats_url("nats://h:4222").skill_queue is None
    assert "skill_queue" not in parse_nats_url("nats://h:4222").url
    bad = (
        "skill_queue=yes",
        "skill_queue=on&skill_queue_lease_s=0",
        "skill_queue=on&skill_queue_applier=elsewhere",
        "skill_queue_shards=4",
    )
    for text in bad:
        with pytest.raises(InvalidInput, match="skill_queue"):
            parse_nats_url(f"nats://h:4222?{text}")


def test_shares_are_stable_and_lags_never_negative() -> None:
    assert [share(4, n) for n in (0, 1, 2, 3, 4, 5)] == [4, 4, 2, 2, 1, 1]
    assert [share(1, n) for n in (1, 2, 3)] == [1, 1, 1]
    assert 0 <= first_shard("instance-a", 4) < 4
    assert first_shard("instance-a", 1) == 0
    assert QueueState(0, None).lag_s(100.0) == 0.0
    assert QueueState(3, 90.0).lag_s(100.0) == 10.0
    assert QueueState(3, 110.0).lag_s(100.0) == 0.0  # another clock ahead: never negative


def test_a_full_queue_refuses_a_judgment_before_its_award(nats_store_url: str) -> None:
    """Bound 3 and no applier: three awards wait with their evidence (none applied: the
    depth, the oldest's age and ``pending`` say so); the fourth judgment is refused
    (``SkillQueueFull``, counted) with no award stored; an applier empties the queue, each
    key applied once, and the refused judgment retried is then accepted and applied."""

    async def main() -> None:
        store = await open_store(nats_store_url + QUEUED + "&skill_queue_max_msgs=3")
        try:
            oracle, skill = _oracle(store)
            queue = _queue(skill)
            assert (await queue.state()) == QueueState(0, None)
            before = datetime.now(UTC).timestamp()
            for n in range(3):
                result = await oracle.submit_for_judgment(_request("agent-a", f"c{n}"))
                assert result.total_xp > 0  # the award is answered at once
            state = await queue.state()
            assert state.depth == 3
            assert state.oldest_at is not None
            checked = datetime.now(UTC).timestamp()  # the oldest was stored after ``before``
            assert 0 <= state.lag_s(checked) <= checked - before
            assert await store.get_skills(["agent-a"]) == {}
            assert (await skill.freshness()).pending == 3  # waiting counts as pending
            profile = await store.get_profile("agent-a")
            with pytest.raises(SkillQueueFull):
                await oracle.submit_for_judgment(_request("agent-a", "c3"))
            assert queue.refused == 1
            assert await store.get_event("agent-a", "judgment:c3") is None
            assert await store.get_profile("agent-a") == profile
            applier = SkillApplier(queue, skill, "one", SystemClock())
            await applier.start()
            try:
                await skill.drained(timeout_s=30)
                await oracle.submit_for_judgment(_request("agent-a", "c3"))
                await skill.drained(timeout_s=30)
            finally:
                await applier.stop()
            assert applier.applied == 4
            assert (await queue.state()) == QueueState(0, None)
            keys = await _judgment_keys(store)
            assert keys == Counter(f"judgment:agent-a:c{n}" for n in range(4))
        finally:
            await store.close()

    asyncio.run(main())


def test_the_lease_is_exclusive_until_it_ends(nats_store_url: str) -> None:
    async def main() -> None:
        store = await open_store(nats_store_url + QUEUED)
        try:
            queue = _queue(SkillService(store))
            assert queue.shards == 1
            now = datetime.now(UTC).timestamp()
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


def test_a_second_applier_takes_the_queue_when_the_first_stops(nats_store_url: str) -> None:
    """Passes run by hand (leases of 60 s: none ends meanwhile, however slow the machine):
    the first instance takes the queue; the second, present too, holds nothing while the
    first holds it; once the first stops, the second takes it; judgments through both
    instances throughout are applied once each, and replay agrees."""

    async def main() -> None:
        url = nats_store_url + "&skill_queue=on&skill_queue_lease_s=60"
        stores = [await open_store(url) for _ in range(2)]
        pairs = [_oracle(store) for store in stores]
        first, second = (
            SkillApplier(_queue(skill), skill, name, SystemClock())
            for (_, skill), name in zip(pairs, ("first", "second"), strict=True)
        )
        try:
            await first.one_pass()
            assert first.held == {0}
            for n in range(40):
                await pairs[n % 2][0].submit_for_judgment(_request(f"agent-{n % 7}", f"c{n}"))
            await second.one_pass()
            assert second.held == frozenset()  # the only shard is held
            await pairs[0][1].drained(timeout_s=30)
            await first.stop()
            for n in range(40, 80):
                await pairs[n % 2][0].submit_for_judgment(_request(f"agent-{n % 7}", f"c{n}"))
            await second.one_pass()
            assert second.held == {0}
            await pairs[1][1].drained(timeout_s=30)
            await second.stop()
            assert (first.applied, second.applied) == (40, 40)
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


def test_judgments_wait_then_are_applied_once_and_replay_agrees(nats_store_url: str) -> None:
    """Through the Oracle: a judgment's answer does not wait for its skill (nothing is
    applied before the applier runs; the evidence is pending meanwhile); a repeat of a
    waiting judgment applies its evidence at once, which the applier then finds applied;
    once applied the log holds each judgment once and replays to the stored states
    (``oracle verify``); repeats after that add nothing."""

    async def main() -> None:
        store = await open_store(nats_store_url + QUEUED)
        try:
            oracle, skill = _oracle(store)
            for n in range(30):
                await oracle.submit_for_judgment(_request(f"agent-{n % 5}", f"c{n}"))
            assert await store.get_skills([f"agent-{n}" for n in range(5)]) == {}
            assert (await skill.freshness()).pending == 30
            await oracle.submit_for_judgment(_request("agent-0", "c0"))  # a repeat
            assert set(await store.get_skills(["agent-0", "agent-1"])) == {"agent-0"}
            applier = SkillApplier(_queue(skill), skill, "one", SystemClock())
            await applier.start()
            try:
                await skill.drained(timeout_s=30)
                for n in range(0, 30, 3):  # repeats once applied
                    await oracle.submit_for_judgment(_request(f"agent-{n % 5}", f"c{n}"))
            finally:
                await applier.stop()
            assert applier.applied == 30  # c0 among them: a no-op by its key
            keys = await _judgment_keys(store)
            assert len(keys) == 30
            assert set(keys.values()) == {1}
            assert len(await store.get_skills([f"agent-{n}" for n in range(5)])) == 5
            assert not (await verify_skills(store, SkillRules())).differences
        finally:
            await store.close()

    asyncio.run(main())


def test_an_applier_whose_lease_lapsed_applies_again_once_renewed(nats_store_url: str) -> None:
    """Its clock past its lease (renewals that failed, e.g. while a cluster lost a node):
    its loop pauses, stays held, and applies again once a pass renews the lease."""

    async def main() -> None:
        store = await open_store(nats_store_url + QUEUED)
        try:
            oracle, skill = _oracle(store)
            clock = FixedClock(datetime.now(UTC))
            applier = SkillApplier(_queue(skill), skill, "one", clock)
            try:
                await applier.one_pass()
                assert applier.held == {0}
                clock.advance(10)  # the lease (2 s) has ended by the applier's clock
                for n in range(12):
                    await oracle.submit_for_judgment(_request(f"agent-{n % 5}", f"c{n}"))
                await applier.one_pass()  # renewed: nobody else took it
                assert applier.held == {0}
                await skill.drained(timeout_s=30)
            finally:
                await applier.stop()
            assert len(await _judgment_keys(store)) == 12
        finally:
            await store.close()

    asyncio.run(main())


def test_a_separate_apply_process_applies_what_serve_leaves(nats_store_url: str) -> None:
    """``skill_queue_applier=apart``: the store's queue says serve runs no applier; an
    ``agentladder skill apply`` process (its own OS process) takes the lease, applies every
    judgment's evidence once, and on SIGTERM gives the lease up and says what it applied."""
    url = nats_store_url + QUEUED + "&skill_queue_applier=apart"
    queue_options = parse_nats_url(url).skill_queue
    assert queue_options is not None
    assert not queue_options.in_serve
    process = subprocess.Popen(
        [sys.executable, "-m", "agentladder.cli", "skill", "apply", "--store", url],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ),
    )  # fmt: skip

    async def main() -> None:
        store = await open_store(url)
        try:
            oracle, skill = _oracle(store)
            assert not _queue(skill).in_serve
            for n in range(20):
                await oracle.submit_for_judgment(_request(f"agent-{n % 4}", f"c{n}"))
            await skill.drained(timeout_s=60)  # applied by the other process
            keys = await _judgment_keys(store)
            assert len(keys) == 20
            assert set(keys.values()) == {1}
            holders = await _queue(skill).holders(datetime.now(UTC).timestamp())
            assert list(holders) == [0]
            assert holders[0].startswith("apply-")
        finally:
            await store.close()

    try:
        asyncio.run(main())
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    assert "skill applier stopped: 20 evidences applied" in out


def test_a_new_lease_time_updates_the_consumers_ack_wait(nats_store_url: str) -> None:
    """The consumer ``skill_applier`` is made at the first opening, starting after the
    stream's last event; opened again with another lease time, its ack wait follows."""

    async def ack_wait(url: str) -> float:
        store = await open_store(url)
        try:
            nc = await nats.connect(url.partition("?")[0])
            try:
                options = parse_nats_url(url)
                info = await nc.jetstream().consumer_info(options.oracle_stream, APPLIER)
                assert info.config.deliver_policy == DeliverPolicy.NEW
                return float(info.config.ack_wait or 0)
            finally:
                await nc.close()
        finally:
            await store.close()

    base = nats_store_url + "&skill_queue=on"
    assert asyncio.run(ack_wait(base + "&skill_queue_lease_s=5")) == 5.0
    assert asyncio.run(ack_wait(base + "&skill_queue_lease_s=7")) == 7.0


def test_a_one_shot_judge_applies_its_evidence_before_it_answers(nats_store_url: str) -> None:
    """``agentladder judge`` (its own OS process, no applier running anywhere) on a store
    with the queue: the agent's skill shows the judgment as soon as the command answered,
    as an instance without the queue writes it; an applier started afterwards finds the
    award without evidence to apply, and the log holds the judgment once."""
    url = nats_store_url + QUEUED

    async def opened() -> None:  # the store and its consumer exist before the command
        store = await open_store(url)
        await store.close()

    asyncio.run(opened())
    done = subprocess.run(
        [sys.executable, "-m", "agentladder.cli", "judge", "--agent-id", "agent-0",
         "--contract-id", "c-cli", "--score", "7", "--task-type", "code", "--new-agent",
         "--store", url],
        capture_output=True, text=True, env=dict(os.environ), timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "agent-0: +" in done.stdout

    async def main() -> None:
        store = await open_store(url)
        try:
            assert set(await store.get_skills(["agent-0"])) == {"agent-0"}
            oracle, skill = _oracle(store)
            await oracle.submit_for_judgment(_request("agent-1", "c-served"))  # queued
            assert await store.get_skills(["agent-1"]) == {}
            applier = SkillApplier(_queue(skill), skill, "one", SystemClock())
            await applier.start()
            try:
                await skill.drained(timeout_s=30)
            finally:
                await applier.stop()
            assert applier.applied == 1  # agent-1's; the command's award carried none
            assert await _judgment_keys(store) == Counter(
                {"judgment:agent-0:c-cli": 1, "judgment:agent-1:c-served": 1}
            )
            assert not (await verify_skills(store, SkillRules())).differences
        finally:
            await store.close()

    asyncio.run(main())
