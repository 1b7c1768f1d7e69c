"""The Sentinels: sampling by level within binomial bounds, reproducible; verdicts recorded once."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

from agentladder.domain.levels import Level
from agentladder.errors import NotFound, PayloadConflict
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.sentinel import Sentinel
from agentladder.services.oracle.service import Oracle
from agentladder.store.base import Store
from agentladder.store.memory import MemoryStore

DRAWS = 20_000


async def oracle_with_levels(store: Store) -> Oracle:
    """Agents r (rookie), l (reliable), t (trusted), e (expert) by raw XP (new agents)."""
    oracle = Oracle(store)
    for agent, xp in (("l", 100), ("t", 500), ("e", 2000)):
        await oracle.award_xp(agent, "seed", xp, "seed", new_agent=True)
    return oracle


@pytest.mark.parametrize(("agent", "rate"), [("r", 1.0), ("l", 0.2), ("t", 0.05), ("e", 0.0)])
def test_observed_rates_are_within_binomial_bounds(agent: str, rate: float) -> None:
    """20,000 decisions per level with a fixed seed: within 5 standard deviations of the rate.

    Sampling does not depend on the backend, so this runs on the in-memory store only.
    """

    async def body(store: Store) -> None:
        sentinel = Sentinel(await oracle_with_levels(store), seed=2026)
        decisions = [await sentinel.should_validate(agent) for _ in range(DRAWS)]
        sampled = sum(d.validate_output for d in decisions)
        sigma = math.sqrt(DRAWS * rate * (1 - rate))
        assert abs(sampled - DRAWS * rate) <= 5 * sigma
        expected_reason = "sampled" if rate == 1.0 else None
        if expected_reason:
            assert {d.reason for d in decisions} == {"sampled"}
        if rate == 0.0:
            assert {d.reason for d in decisions} == {"skipped_by_level"}
        assert {d.rate for d in decisions} == {rate}

    asyncio.run(body(MemoryStore()))


def test_same_seed_same_decisions_and_force_validates_experts(with_store: Any) -> None:
    """Two Sentinels with one seed decide alike; force validates an expert as 'requested'."""

    async def body(store: Store) -> None:
        oracle = await oracle_with_levels(store)
        one, two = Sentinel(oracle, seed=7), Sentinel(oracle, seed=7)
        first = [(await one.should_validate("l")).validate_output for _ in range(200)]
        second = [(await two.should_validate("l")).validate_output for _ in range(200)]
        assert first == second
        forced = await one.should_validate("e", force=True)
        assert forced.validate_output
        assert forced.reason == "requested"
        assert forced.level is Level.EXPERT

    with_store(body)


def test_task_type_sampling_uses_the_specialization_level(with_store: Any) -> None:
    """An expert overall is sampled like a rookie in a task type it is new to."""

    async def body(store: Store) -> None:
        sentinel = Sentinel(await oracle_with_levels(store), seed=1)
        decision = await sentinel.should_validate("e", task_type="poetry")
        assert (decision.level, decision.rate, decision.reason) == (Level.ROOKIE, 1.0, "sampled")

    with_store(body)


def test_failed_validation_counts_the_task_failed_and_keeps_xp(with_store: Any) -> None:
    """A failed check cuts the streak and success rate, takes no XP, and is recorded once."""

    async def body(store: Store) -> None:
        oracle = Oracle(store)
        for i in range(4):
            await oracle.submit_for_judgment(
                JudgmentRequest(agent_id="a1", contract_id=f"c{i}", task_type="sql", score=8.0)
            )
        before = await oracle.get_profile("a1")
        sentinel = Sentinel(oracle, seed=1)
        verdict = await sentinel.record_validation("a1", "c3", passed=False, notes="wrong join")
        assert verdict.counted_as_failure
        assert not verdict.duplicate
        after = await oracle.get_profile("a1")
        assert after.xp == before.xp
        assert after.stats.current_streak == 0
        assert after.stats.success_rate == 0.75
        again = await sentinel.record_validation("a1", "c3", passed=False, notes="wrong join")
        assert again.duplicate
        assert (await oracle.get_profile("a1")) == after
        with pytest.raises(PayloadConflict):
            await sentinel.record_validation("a1", "c3", passed=True)
        passed = await sentinel.record_validation("a1", "c1", passed=True)
        assert not passed.counted_as_failure
        assert (await oracle.get_profile("a1")).stats.success_rate == 0.75
        with pytest.raises(NotFound):
            await sentinel.record_validation("a1", "never-judged", passed=False)

    with_store(body)
