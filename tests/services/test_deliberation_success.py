"""What a deliberation tells the Oracle: a participant scored under
``orchestrator.success_min_score`` is judged failed (streak cut, probation at the task
type); without the setting any score is a success, as before. Faults land on whoever
failed: an author whose evaluators all failed is unscored and not judged at all (no
failure, no probation), the evaluator that failed is judged failed."""

from __future__ import annotations

from typing import Any

import pytest

from agentladder.config import OrchestratorSettings
from agentladder.domain.attribution import JudgmentCall, Verdict, judgment_of
from agentladder.domain.deliberation import DeliberationRequest
from agentladder.domain.deliberation_record import SideEffectState
from agentladder.domain.profile import ProbationCause
from agentladder.errors import ProviderError
from agentladder.providers.base import EvaluateRequest, Evaluation, Proposal, ProposeRequest
from agentladder.store.base import Store
from tests.services.world import simulated, world

QUALITIES = {"good": 8.5, "weak": 3.0, "fair": 6.5}


def deliberate(task_type: str = "sql") -> DeliberationRequest:
    return DeliberationRequest(
        user_query="Which index?", agent_names=list(QUALITIES), task_type=task_type
    )


@pytest.mark.parametrize(
    ("score", "min_score", "expected"),
    [(0.0, None, True), (4.99, 5.0, False), (5.0, 5.0, True), (9.0, 5.0, True)],
)  # fmt: skip
def test_success_is_a_score_at_least_the_minimum(
    score: float | None, min_score: float | None, expected: bool
) -> None:
    """A scored participant succeeds at or over the minimum (any score without one)."""
    call = judgment_of(Verdict.SCORED, score, min_score)
    assert call is (JudgmentCall.SUCCESS if expected else JudgmentCall.FAILED)


class Malformed:
    """A provider whose every answer is malformed JSON."""

    async def propose(self, request: ProposeRequest) -> Proposal:
        raise ProviderError("unparseable", "not JSON: '<html>'")

    async def evaluate(self, request: EvaluateRequest) -> Evaluation:
        raise ProviderError("unparseable", "not JSON: '<html>'")

    async def aclose(self) -> None:
        """Nothing to close."""


def test_an_author_whose_evaluators_failed_is_not_judged_the_evaluator_is(
    with_store: Any,
) -> None:
    """success_min_score 5: slow's proposal is scored by nobody (its only evaluator,
    malformed, failed): unscored, no judgment, no probation; malformed failed its own
    calls: judged failed, on probation. Nobody was promoted, and the ranking says why."""

    async def body(store: Store) -> None:
        providers = {**simulated({"slow": 8.0}), "malformed": Malformed()}
        settings = OrchestratorSettings(success_min_score=5.0)
        orchestrator = await world(store, providers, settings=settings)
        record = await orchestrator.run(
            DeliberationRequest(user_query="q", agent_names=["slow", "malformed"], task_type="sql")
        )
        await orchestrator.settle()
        found = (await orchestrator.get(record.id)).outcomes
        assert found["slow"].verdict is Verdict.UNSCORED
        assert found["malformed"].verdict is Verdict.FAILED
        slow = await orchestrator.oracle.get_profile("slow")
        assert (slow.stats.total_tasks, slow.probation) == (0, {})
        assert await store.get_profile("slow") is None  # nothing judged, nothing stored
        bad = await orchestrator.oracle.get_profile("malformed")
        assert (bad.stats.total_tasks, bad.stats.successful_tasks) == (1, 0)
        assert bad.probation["sql"].cause is ProbationCause.FAILED_JUDGMENT
        stored = await orchestrator.get(record.id)
        assert stored.ranking.promoted == []
        assert stored.ranking.floor_group == ["malformed", "slow"]
        assert stored.ranking.explanation is not None
        assert "slow: unscored" in stored.ranking.explanation

    with_store(body)


def test_a_score_under_the_minimum_is_a_failed_judgment_that_starts_probation(
    with_store: Any,
) -> None:
    """With success_min_score 6.5, the agent scored 3.0 is judged failed at sql (no success,
    probation at sql, cause failed_judgment); the one scored exactly 6.5 and the one scored
    8.5 succeed and are on no probation."""

    async def body(store: Store) -> None:
        settings = OrchestratorSettings(success_min_score=6.5)
        orchestrator = await world(store, simulated(QUALITIES), settings=settings)
        record = await orchestrator.run(deliberate())
        await orchestrator.settle()
        assert record.scores == QUALITIES
        assert record.judgments.state is SideEffectState.APPLIED
        weak = await orchestrator.oracle.get_profile("weak")
        assert (weak.stats.total_tasks, weak.stats.successful_tasks) == (1, 0)
        assert weak.probation["sql"].cause is ProbationCause.FAILED_JUDGMENT
        for agent in ("good", "fair"):
            profile = await orchestrator.oracle.get_profile(agent)
            assert (profile.stats.total_tasks, profile.stats.successful_tasks) == (1, 1)
            assert profile.probation == {}

    with_store(body)


def test_without_a_minimum_every_scored_participant_succeeds(with_store: Any) -> None:
    """The default (None): the agent scored 3.0 is judged successful, as before the setting."""

    async def body(store: Store) -> None:
        orchestrator = await world(store, simulated(QUALITIES))
        await orchestrator.run(deliberate())
        await orchestrator.settle()
        for agent in QUALITIES:
            profile = await orchestrator.oracle.get_profile(agent)
            assert (profile.stats.total_tasks, profile.stats.successful_tasks) == (1, 1)
            assert profile.probation == {}

    with_store(body)
