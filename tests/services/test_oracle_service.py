"""The Oracle service: the award process, idempotency, judges, levels, privileges, verify."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import ValidationError

from agentladder.domain.agents import AgentConfig
from agentladder.domain.levels import Level, LevelThresholds
from agentladder.domain.rules import AchievementTable, Complexity, OracleRules, XPTable
from agentladder.errors import InvalidInput, NotFound, PayloadConflict, Refused
from agentladder.services.clock import FixedClock
from agentladder.services.oracle.judges import GivenScoreJudge, ProviderJudge
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.service import Oracle
from agentladder.services.oracle.verify import verify_store
from agentladder.store.base import Store


def request(contract: str, agent: str = "gemini-2.0-flash", **fields: Any) -> JudgmentRequest:
    """A judgment of ``agent`` (new to the Oracle, as these tests' agents are)."""
    values: dict[str, Any] = {"task_type": "image_generation", "score": 8.5, "new_agent": True}
    values.update(fields)
    return JudgmentRequest(agent_id=agent, contract_id=contract, **values)


def test_specification_example_through_the_service(with_store: Any) -> None:
    """img-gen-001: one retry, 8.5, cost 0.05 under 0.10 → 35 XP = 10 + 15 + 10, itemized."""

    async def body(store: Store) -> None:
        oracle = Oracle(store, clock=FixedClock())
        result = await oracle.submit_for_judgment(
            request("img-gen-001", retries=1, duration_ms=5000, cost=0.05, budget=0.10)
        )
        assert result.xp_awarded == 35
        assert [(b.event, b.xp) for b in result.breakdown] == [
            ("task_completed", 10),
            ("quality_above_8", 15),
            ("under_budget", 10),
        ]
        assert [(a.name, a.xp) for a in result.achievements] == [("First Steps", 10)]
        assert result.total_xp == 45
        assert result.profile.xp == 45
        assert not result.duplicate
        assert result.level_up is None

    with_store(body)


def test_same_contract_twice_returns_the_first_result(with_store: Any) -> None:
    """A repeat is duplicate=true with the first award and changes nothing."""

    async def body(store: Store) -> None:
        oracle = Oracle(store)
        first = await oracle.submit_for_judgment(request("c-1"))
        again = await oracle.submit_for_judgment(request("c-1"))
        assert again.duplicate
        assert again.xp_awarded == first.xp_awarded
        assert again.breakdown == first.breakdown
        assert again.profile == first.profile
        assert len(await store.events("gemini-2.0-flash")) == 1

    with_store(body)


def test_same_contract_other_payload_is_a_conflict(with_store: Any) -> None:
    """The same contract id with another score is refused as a PayloadConflict."""

    async def body(store: Store) -> None:
        oracle = Oracle(store)
        await oracle.submit_for_judgment(request("c-1", score=7.0))
        with pytest.raises(PayloadConflict):
            await oracle.submit_for_judgment(request("c-1", score=9.0))

    with_store(body)


def test_two_racing_submissions_of_one_contract_award_once(with_store: Any) -> None:
    """Concurrent submissions of the same contract: one award, the other a duplicate."""

    async def body(store: Store) -> None:
        oracle = Oracle(store)
        results = await asyncio.gather(
            *(oracle.submit_for_judgment(request("race")) for _ in range(8))
        )
        assert sorted(r.duplicate for r in results) == [False] + [True] * 7
        profile = await oracle.get_profile("gemini-2.0-flash")
        assert profile.stats.total_tasks == 1
        assert {r.xp_awarded for r in results} == {results[0].xp_awarded}

    with_store(body)


def test_provider_and_model_come_from_the_config_else_the_judgment(with_store: Any) -> None:
    """A configured agent's provider/model win; an unconfigured one takes the judgment's."""

    async def body(store: Store) -> None:
        agents = {"a1": AgentConfig(name="a1", provider_id="openai", model_name="gpt-4o")}
        oracle = Oracle(store, agents=agents)
        one = await oracle.submit_for_judgment(request("c", agent="a1", provider="x", model="y"))
        two = await oracle.submit_for_judgment(
            request("c", agent="a2", provider="google", model="g")
        )
        assert (one.profile.provider, one.profile.model) == ("openai", "gpt-4o")
        assert (two.profile.provider, two.profile.model) == ("google", "g")

    with_store(body)


def test_judge_scores_a_judgment_without_a_score(with_store: Any) -> None:
    """With no score and a judge, the judge's score earns the quality bonus and is shown."""

    async def body(store: Store) -> None:
        oracle = Oracle(store, judge=GivenScoreJudge())
        result = await oracle.submit_for_judgment(request("c", score=None, output='{"score": 9.5}'))
        assert result.score == 9.5
        assert result.judged_by == "given_score"
        assert ("quality_above_9", 25) in [(b.event, b.xp) for b in result.breakdown]
        with pytest.raises(InvalidInput) as caught:
            await oracle.submit_for_judgment(request("d", score=None, output="great work"))
        assert caught.value.field == "output"
        assert (await store.get_event("gemini-2.0-flash", "judgment:d")) is None

    with_store(body)


def test_a_judge_cannot_judge_its_own_agent(with_store: Any) -> None:
    """A judge backed by agent X refuses to score X's output."""

    class SelfJudge(GivenScoreJudge):
        agent_id = "gemini-2.0-flash"

    async def body(store: Store) -> None:
        oracle = Oracle(store, judge=SelfJudge())
        with pytest.raises(Refused):
            await oracle.submit_for_judgment(request("c", score=None, output="9"))

    with_store(body)


@pytest.mark.parametrize(
    ("field", "value"),
    [("score", float("nan")), ("score", 11.0), ("score", -1.0), ("cost", -0.5),
     ("duration_ms", -3.0), ("contract_id", ""), ("task_type", "Image Gen")],
)  # fmt: skip
def test_bad_judgments_are_refused_before_anything_is_stored(field: str, value: object) -> None:
    """Out-of-range or NaN score, negative cost or duration, empty contract, bad task type."""
    values: dict[str, Any] = {"agent_id": "a1", "contract_id": "c", "score": 5.0, field: value}
    with pytest.raises(ValidationError) as caught:
        JudgmentRequest(**values)
    assert field in str(caught.value)


def test_specification_specialization_profile_through_the_service(with_store: Any) -> None:
    """280 XP in image_generation → trusted, 170 in text_analysis → reliable, 450 overall."""
    rules = OracleRules(
        xp=XPTable(streak_milestones={}, streak_repeat_every=0),
        achievements=AchievementTable(first_steps=0, specialist=0),
    )

    async def body(store: Store) -> None:
        oracle = Oracle(store, rules)
        for i in range(8):  # 8 x (10 base + 25 quality) = 280
            await oracle.submit_for_judgment(request(f"img-{i}", retries=1, score=9.5))
        for i in range(4):  # 4 x 35 + 30 = 170
            await oracle.submit_for_judgment(
                request(f"txt-{i}", task_type="text_analysis", retries=1, score=9.5)
            )
        await oracle.submit_for_judgment(
            request("txt-4", task_type="text_analysis", retries=1, score=8.5,
                    duration_ms=10, time_limit_ms=100)
        )  # fmt: skip
        profile = await oracle.get_profile("gemini-2.0-flash")
        image, text = (
            profile.specializations["image_generation"],
            profile.specializations["text_analysis"],
        )
        assert (image.xp, image.level, text.xp, text.level) == (
            280,
            Level.TRUSTED,
            170,
            Level.RELIABLE,
        )
        assert (profile.xp, profile.level) == (450, Level.RELIABLE)

    with_store(body)


def test_level_ups_are_reported_once_each(with_store: Any) -> None:
    """Climbing to expert: reliable, trusted, expert each reported on exactly one result."""

    async def body(store: Store) -> None:
        oracle = Oracle(store)
        ups = []
        for i in range(90):
            result = await oracle.submit_for_judgment(
                request(f"c{i}", score=10.0, task_type=f"t{i % 9}")
            )
            if result.level_up:
                ups.append(result.level_up.to_level)
        assert ups == [Level.RELIABLE, Level.TRUSTED, Level.EXPERT]

    with_store(body)


def test_privileges_and_validation_rates_follow_levels(with_store: Any) -> None:
    """Raw XP moves an agent up; rates are 1.0/0.2/0.05/0.0; a new task type is rookie."""

    async def body(store: Store) -> None:
        oracle = Oracle(store)
        assert await oracle.get_validation_rate("newbie") == 1.0
        rates = []
        for i, xp in enumerate((100, 400, 1500)):
            await oracle.award_xp("a1", "bonus", xp, f"e{i}")
            rates.append(await oracle.get_validation_rate("a1"))
        assert rates == [0.2, 0.05, 0.0]
        assert await oracle.get_validation_rate("a1", "poetry") == 1.0
        privileges = await oracle.get_privileges("a1")
        assert privileges.level is Level.EXPERT
        assert privileges.max_retries is None
        assert privileges.can_mentor

    with_store(body)


def test_raw_award_is_idempotent_and_never_negative(with_store: Any) -> None:
    """award_xp once per event id; negative XP refused naming the field."""

    async def body(store: Store) -> None:
        oracle = Oracle(store)
        first = await oracle.award_xp("a1", "bonus", 40, "e1")
        again = await oracle.award_xp("a1", "bonus", 40, "e1")
        assert not first.duplicate
        assert again.duplicate
        assert again.profile.xp == 40
        with pytest.raises(PayloadConflict):
            await oracle.award_xp("a1", "bonus", 50, "e1")
        with pytest.raises(InvalidInput) as caught:
            await oracle.award_xp("a1", "bonus", -5, "e2")
        assert caught.value.field == "xp"

    with_store(body)


def test_check_level_up_applies_lowered_thresholds_once(with_store: Any) -> None:
    """After the config lowers a threshold, check_level_up raises the level and records it."""

    async def body(store: Store) -> None:
        await Oracle(store).submit_for_judgment(request("c1", score=9.5))
        easier = OracleRules(levels=LevelThresholds(reliable=20, trusted=500, expert=2000))
        oracle = Oracle(store, easier)
        change = await oracle.check_level_up("gemini-2.0-flash")
        assert change is not None
        assert change.to_level is Level.RELIABLE
        assert await oracle.check_level_up("gemini-2.0-flash") is None
        assert (await verify_store(store, easier)).ok

    with_store(body)


def test_unknown_profile_and_bad_arguments(with_store: Any) -> None:
    """Unknown agents are NotFound; leaderboard limits and task types are checked."""

    async def body(store: Store) -> None:
        oracle = Oracle(store)
        with pytest.raises(NotFound):
            await oracle.get_profile("ghost")
        with pytest.raises(InvalidInput) as caught:
            await oracle.get_leaderboard(limit=0)
        assert caught.value.field == "limit"
        with pytest.raises(InvalidInput) as caught:
            await oracle.get_leaderboard(task_type="Bad Type")
        assert caught.value.field == "task_type"
        with pytest.raises(InvalidInput):
            await oracle.get_profile("../etc")

    with_store(body)


def test_task_allowance_by_level_and_task_type(with_store: Any) -> None:
    """A rookie may take simple tasks with 3 retries; an expert any; a new task type: rookie."""

    async def body(store: Store) -> None:
        oracle = Oracle(store)
        await oracle.award_xp("pro", "seed", 2000, "seed")
        rookie = await oracle.task_allowance("newbie", complexity=Complexity.MEDIUM)
        assert not rookie.allowed
        assert rookie.reason is not None
        assert "simple" in rookie.reason
        assert rookie.max_retries == 3
        expert = await oracle.task_allowance("pro", complexity=Complexity.COMPLEX)
        assert expert.allowed
        assert expert.max_retries is None
        assert expert.can_self_correct
        fresh = await oracle.task_allowance("pro", "poetry", Complexity.COMPLEX)
        assert not fresh.allowed
        assert fresh.level is Level.ROOKIE

    with_store(body)


def test_task_allowances_read_at_once_match_task_allowance(with_store: Any) -> None:
    """task_allowances gives every agent asked what task_allowance gives it alone."""

    async def body(store: Store) -> None:
        oracle = Oracle(store)
        await oracle.award_xp("pro", "seed", 2000, "seed")
        for task_type, complexity in ((None, Complexity.COMPLEX), ("poetry", None)):
            many = await oracle.task_allowances(["newbie", "pro"], task_type, complexity)
            assert list(many) == ["newbie", "pro"]
            for agent in ("newbie", "pro"):
                assert many[agent] == await oracle.task_allowance(agent, task_type, complexity)
        with pytest.raises(InvalidInput):
            await oracle.task_allowances(["../etc"])
        with pytest.raises(InvalidInput):
            await oracle.task_allowances(["pro"], "Bad Type")

    with_store(body)


def test_an_llm_judge_scores_through_a_provider(with_store: Any) -> None:
    """A ProviderJudge (here a noiseless simulated model) scores an output without a score."""

    async def body(store: Store) -> None:
        from agentladder.providers.settings import SimulatedSettings
        from agentladder.providers.simulated import SimulatedProvider, marker

        model = SimulatedProvider("judge-model", SimulatedSettings())
        oracle = Oracle(store, judge=ProviderJudge(model, agent_id="judge-model"))
        output = marker("gemini-2.0-flash", 9.5) + " a picture of a cat"
        result = await oracle.submit_for_judgment(request("c", score=None, output=output))
        assert result.score == 9.5
        assert result.judged_by == "llm"
        with pytest.raises(Refused):
            await oracle.submit_for_judgment(
                request("d", agent="judge-model", score=None, output="x")
            )

    with_store(body)
