"""Probation through the Oracle and its Sentinels, on every store: the effective rate, the
clearance, model changes, idempotent verdicts, replay, restarts and two NATS instances."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agentladder.domain.levels import Level, LevelThresholds
from agentladder.domain.probation import SentinelSettings
from agentladder.domain.rules import OracleRules
from agentladder.domain.run_bound import run_clearance
from agentladder.services.agents.registry import Registry
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.sentinel import Sentinel
from agentladder.services.oracle.service import Oracle
from agentladder.services.oracle.verify import verify_store
from agentladder.store.base import Store
from agentladder.store.url import open_store

# trusted's clearance under the default sentinel settings (tests/domain/test_run_bound.py)
TRUSTED_CLEARANCE = run_clearance(0.05, 0.02, 1000, 0.95)
RULES = OracleRules(levels=LevelThresholds(expert=1_000_000))
"""Agents stay trusted however many tasks a test judges."""


async def trusted_agent(oracle: Oracle, agent: str = "a") -> None:
    """``agent`` (new) trusted overall by raw XP, with one successful sql task c0."""
    await oracle.award_xp(agent, "seed", 500, "seed", new_agent=True)
    await judge(oracle, agent, 0)


async def judge(oracle: Oracle, agent: str, n: int, success: bool = True) -> None:
    """Judge ``agent``'s sql task c<n>."""
    await oracle.submit_for_judgment(
        JudgmentRequest(agent_id=agent, contract_id=f"c{n}", task_type="sql", score=7.0,
                        success=success)
    )  # fmt: skip


def standing(profile: Any) -> Any:
    """Everything of a profile but its probation."""
    return profile.model_dump(exclude={"probation"})


def test_one_failure_validates_everything_until_clearance_then_back(with_store: Any) -> None:
    """Trusted, one failed validation: rate 1.0 (probation) until the clearance's later tasks pass,
    then 0.05 again; should_validate says so; XP and levels are untouched throughout."""

    async def body(store: Store) -> None:
        oracle = Oracle(store, RULES)
        sentinel = Sentinel(oracle, seed=3)
        await trusted_agent(oracle)
        before = await oracle.get_privileges("a")
        assert (before.validation_rate, before.effective_rate, before.rate_reason) == (
            0.05, 0.05, "level",
        )  # fmt: skip
        await sentinel.record_validation("a", "c0", passed=False)
        on = await oracle.get_privileges("a")
        assert (on.validation_rate, on.effective_rate, on.rate_reason, on.clearance_left) == (
            0.05, 1.0, "probation", TRUSTED_CLEARANCE,
        )  # fmt: skip
        decisions = [await sentinel.should_validate("a") for _ in range(50)]
        assert all(d.validate_output and d.reason == "probation" for d in decisions)
        assert {(d.rate, d.level_rate) for d in decisions} == {(1.0, 0.05)}
        for n in range(1, TRUSTED_CLEARANCE + 1):
            await judge(oracle, "a", n)
            xp_level = (await oracle.get_profile("a")).xp, (await oracle.get_profile("a")).level
            await sentinel.record_validation("a", f"c{n}", passed=True)
            after = await oracle.get_profile("a")
            assert (after.xp, after.level) == xp_level
            left = (await oracle.get_privileges("a")).clearance_left
            assert left == (TRUSTED_CLEARANCE - n or None)
        back = await oracle.get_privileges("a")
        assert (back.effective_rate, back.rate_reason, back.level) == (0.05, "level", Level.TRUSTED)
        assert (await sentinel.should_validate("a")).rate == 0.05

    with_store(body)


def test_a_failure_in_probation_restarts_it_and_a_repeat_counts_once(with_store: Any) -> None:
    """Passes count once each (a repeated verdict is a duplicate); a new failure restarts
    the clearance; a failed judgment starts probation too."""

    async def body(store: Store) -> None:
        oracle = Oracle(store, RULES)
        sentinel = Sentinel(oracle, seed=3)
        await trusted_agent(oracle)
        await sentinel.record_validation("a", "c0", passed=False)
        for n in (1, 2, 3):
            await judge(oracle, "a", n)
            await sentinel.record_validation("a", f"c{n}", passed=True)
        again = await sentinel.record_validation("a", "c3", passed=True)
        assert again.duplicate
        assert (await oracle.get_privileges("a")).clearance_left == TRUSTED_CLEARANCE - 3
        await sentinel.record_validation("a", "c2", passed=True)  # a repeat, once more
        assert (await oracle.get_privileges("a")).clearance_left == TRUSTED_CLEARANCE - 3
        await judge(oracle, "a", 4)
        await sentinel.record_validation("a", "c4", passed=False)
        assert (await oracle.get_privileges("a")).clearance_left == TRUSTED_CLEARANCE
        await oracle.award_xp("b", "seed", 500, "seed", new_agent=True)
        await judge(oracle, "b", 0, success=False)
        judged_failed = await oracle.get_privileges("b")
        assert (judged_failed.effective_rate, judged_failed.rate_reason) == (1.0, "probation")

    with_store(body)


def test_a_model_change_starts_probation_in_every_task_type(with_store: Any) -> None:
    """A heartbeat with another model_name: reason model_change overall and in each task
    type the agent has; the same heartbeat again adds nothing; XP and levels stay."""

    async def body(store: Store) -> None:
        oracle = Oracle(store, RULES)
        registry = Registry(store, oracle=oracle)
        await registry.heartbeat({"name": "a", "provider_id": "p", "model_name": "m1"})
        await trusted_agent(oracle)
        await oracle.submit_for_judgment(
            JudgmentRequest(agent_id="a", contract_id="v0", task_type="vision", score=7.0)
        )
        before = await oracle.get_profile("a")
        for task_type in (None, "sql", "vision"):
            assert (await oracle.get_privileges("a", task_type)).rate_reason == "level"
        beat = {"name": "a", "provider_id": "p", "model_name": "m2"}
        await registry.heartbeat(beat)
        await registry.heartbeat(beat)
        rate = await oracle.get_privileges("a")
        assert (rate.effective_rate, rate.rate_reason, rate.clearance_left) == (
            1.0, "model_change", TRUSTED_CLEARANCE,
        )  # fmt: skip
        assert set((await oracle.get_profile("a")).probation) == {"*", "sql", "vision"}
        assert standing(await oracle.get_profile("a")) == standing(before)
        kinds = [e.kind.value for e in await store.events("a")]
        assert kinds.count("model_change") == 1
        await registry.heartbeat({"name": "new", "provider_id": "p", "model_name": "m1"})
        await registry.heartbeat({"name": "new", "provider_id": "p", "model_name": "m2"})
        assert await store.get_profile("new") is None  # never judged: nothing to watch

    with_store(body)


def test_level_policy_keeps_the_specification_rates(with_store: Any) -> None:
    """sentinel.policy level: a failure changes no rate."""

    async def body(store: Store) -> None:
        oracle = Oracle(store, RULES, sentinel=SentinelSettings(policy="level"))
        await trusted_agent(oracle)
        await Sentinel(oracle, seed=1).record_validation("a", "c0", passed=False)
        rate = await oracle.get_privileges("a")
        assert (rate.effective_rate, rate.rate_reason, rate.clearance_left) == (0.05, "level", None)

    with_store(body)


def test_replay_rebuilds_probation_exactly(with_store: Any) -> None:
    """Verdicts, failed judgments and a model change: verify finds no difference, and
    the rebuilt probation is the stored one."""

    async def body(store: Store) -> None:
        oracle = Oracle(store, RULES)
        sentinel = Sentinel(oracle, seed=5)
        await trusted_agent(oracle)
        await sentinel.record_validation("a", "c0", passed=False)
        for n in range(1, 12):
            await judge(oracle, "a", n, success=n != 7)
            await sentinel.record_validation("a", f"c{n}", passed=n != 9)
        await oracle.model_changed("a", "model:a:x", "m2", "p")
        await judge(oracle, "a", 12)
        await sentinel.record_validation("a", "c12", passed=True)
        stored = await oracle.get_profile("a")
        assert stored.probation["*"].passes == 1
        assert stored.probation["sql"].cause.value == "model_change"
        report = await verify_store(store, RULES)
        assert report.differences == {}

    with_store(body)


@pytest.mark.parametrize("backend", ["sqlite", "nats"])
def test_probation_survives_a_restart(backend: str, tmp_path: Path, request: Any) -> None:
    """Close the store, open it again: the same probation, the same effective rate."""
    url = (
        f"sqlite:///{tmp_path / 'p.db'}"
        if backend == "sqlite"
        else str(request.getfixturevalue("nats_store_url"))
    )

    async def write() -> Any:
        store = await open_store(url)
        try:
            oracle = Oracle(store, RULES)
            sentinel = Sentinel(oracle, seed=1)
            await trusted_agent(oracle)
            await sentinel.record_validation("a", "c0", passed=False)
            for n in (1, 2):
                await judge(oracle, "a", n)
                await sentinel.record_validation("a", f"c{n}", passed=True)
            return await oracle.get_privileges("a")
        finally:
            await store.close()

    async def read() -> Any:
        store = await open_store(url)
        try:
            return await Oracle(store, RULES).get_privileges("a")
        finally:
            await store.close()

    before = asyncio.run(write())
    after = asyncio.run(read())
    assert after == before
    assert (after.effective_rate, after.clearance_left) == (1.0, TRUSTED_CLEARANCE - 2)


def test_two_instances_on_one_nats_agree(nats_store_url: str) -> None:
    """Two Oracles on two connections: verdicts recorded on both, concurrently, each
    counted exactly once; both see the same effective rate."""

    async def main() -> None:
        one, two = await open_store(nats_store_url), await open_store(nats_store_url)
        try:
            first, second = Oracle(one, RULES), Oracle(two, RULES)
            await trusted_agent(first)
            await Sentinel(second, seed=1).record_validation("a", "c0", passed=False)
            assert (await first.get_privileges("a")).rate_reason == "probation"
            for n in range(1, 21):
                await judge(first if n % 2 else second, "a", n)
            sentinels = Sentinel(first, seed=1), Sentinel(second, seed=2)
            await asyncio.gather(
                *(
                    sentinels[n % 2].record_validation("a", f"c{n}", passed=True)
                    for n in range(1, 21)
                ),
                *(sentinels[1].record_validation("a", f"c{n}", passed=True) for n in (3, 5)),
            )
            seen = await first.get_privileges("a"), await second.get_privileges("a")
            assert seen[0] == seen[1]
            assert seen[0].clearance_left == TRUSTED_CLEARANCE - 20
            assert (await verify_store(one, RULES)).differences == {}
        finally:
            await one.close()
            await two.close()

    asyncio.run(main())
