"""Checking follows the evidence of quality, not volume: the adaptive policy's floor at the
rate an agent's failure share needs to keep ``sentinel.aoql`` (docs/oracle.md)."""

from __future__ import annotations

import asyncio

import pytest

from agentladder.domain.levels import Level
from agentladder.domain.probation import RateReason, SentinelSettings, evidence_rate
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.sentinel import Sentinel
from agentladder.services.oracle.service import Oracle
from agentladder.store.memory import MemoryStore

DRAWS = 2_000


async def imported(oracle: Oracle, agent: str, right: int, wrong: int) -> None:
    """``right`` successful and ``wrong`` failed judgments of ``agent`` at ``qa`` imported as
    history (XP for each, no probation), interleaved."""
    count = right + wrong
    for i in range(count):
        good = (i * right) // count != ((i + 1) * right) // count
        await oracle.submit_for_judgment(
            JudgmentRequest(
                agent_id=agent, contract_id=f"{agent}-{i}", task_type="qa",
                score=9.0 if good else 2.0, success=good, history=True, new_agent=True,
            )
        )  # fmt: skip


def test_an_agent_right_a_quarter_of_the_time_is_checked_on_nearly_every_answer() -> None:
    """200 imported answers, 25% right: expert by volume at ``qa``, yet validated at the
    rate its 75% failure share needs (1 - 0.02/0.75), reason ``evidence``, the share and
    its basis in the answer; the Sentinel checks about that share of 2,000 answers."""

    async def body() -> None:
        oracle = Oracle(MemoryStore())
        await imported(oracle, "weak", right=50, wrong=150)
        profile = await oracle.get_profile("weak")
        assert profile.specializations["qa"].level is Level.EXPERT
        rate = await oracle.get_effective_rate("weak", "qa")
        assert rate.reason is RateReason.EVIDENCE
        assert (rate.judged, rate.failure_share) == (200, 0.75)
        assert rate.effective_rate == pytest.approx(1 - 0.02 / 0.75)
        assert rate.level_rate == 0.0
        sentinel = Sentinel(oracle, seed=7)
        drawn = [await sentinel.should_validate("weak", "qa") for _ in range(DRAWS)]
        share = sum(d.validate_output for d in drawn) / DRAWS
        assert share > 0.95
        assert {d.rate_reason for d in drawn} == {"evidence"}

    asyncio.run(body())


def test_an_agent_right_63_percent_is_checked_and_one_always_right_keeps_its_levels_rate() -> None:
    """63% right: validated at 1 - 0.02/0.37; 200 of 200 right: the expert level's rate
    (the specification's), the evidence allowing it."""

    async def body() -> None:
        oracle = Oracle(MemoryStore())
        await imported(oracle, "fair", right=126, wrong=74)
        await imported(oracle, "good", right=200, wrong=0)
        fair = await oracle.get_effective_rate("fair", "qa")
        assert fair.reason is RateReason.EVIDENCE
        assert fair.effective_rate == pytest.approx(1 - 0.02 / 0.37)
        good = await oracle.get_effective_rate("good", "qa")
        assert (good.reason, good.effective_rate, good.failure_share) == (
            RateReason.LEVEL, 0.0, 0.0,
        )  # fmt: skip

    asyncio.run(body())


def test_the_specifications_policy_and_evidence_off_keep_the_levels_rate() -> None:
    """``sentinel.policy: level`` and ``sentinel.evidence: false`` validate the weak expert
    at the level's rate alone."""

    async def body() -> None:
        for settings in (SentinelSettings(policy="level"), SentinelSettings(evidence=False)):
            oracle = Oracle(MemoryStore(), sentinel=settings)
            await imported(oracle, "weak", right=50, wrong=150)
            rate = await oracle.get_effective_rate("weak", "qa")
            assert rate.effective_rate == 0.0
            assert rate.reason is RateReason.LEVEL

    asyncio.run(body())


@pytest.mark.parametrize(
    ("share", "aoql", "miss", "rate"),
    [(0.0, 0.02, 0.0, 0.0), (0.02, 0.02, 0.0, 0.0), (0.04, 0.02, 0.0, 0.5),
     (0.75, 0.02, 0.0, 1 - 0.02 / 0.75), (0.04, 0.02, 0.5, 1.0), (1.0, 0.02, 0.0, 0.98)],
)  # fmt: skip
def test_the_rate_the_evidence_needs(share: float, aoql: float, miss: float, rate: float) -> None:
    """``p (1 - r (1 - miss)) <= aoql`` at the least ``r``, capped at 1."""
    assert evidence_rate(share, aoql, miss) == pytest.approx(rate)
    if 0.0 < rate < 1.0:
        assert share * (1 - rate * (1 - miss)) == pytest.approx(aoql)
