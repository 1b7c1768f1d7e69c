"""What a deliberation tells the Oracle: a participant scored under
``orchestrator.success_min_score`` is judged failed (streak cut, probation at the task
type); without the setting any score is a success, as before."""

from __future__ import annotations

from typing import Any

import pytest

from agentladder.config import OrchestratorSettings
from agentladder.domain.deliberation import DeliberationRequest
from agentladder.domain.deliberation_record import SideEffectState
from agentladder.domain.profile import ProbationCause
from agentladder.services.deliberations.side_effects import succeeded
from agentladder.store.base import Store
from tests.services.world import simulated, world

QUALITIES = {"good": 8.5, "weak": 3.0, "fair": 6.5}


def deliberate(task_type: str = "sql") -> DeliberationRequest:
    return DeliberationRequest(
        user_query="Which index?", agent_names=list(QUALITIES), task_type=task_type
    )


@pytest.mark.parametrize(
    ("score", "min_score", "expected"),
    [(None, None, False), (None, 5.0, False), (0.0, None, True), (4.99, 5.0, False),
     (5.0, 5.0, True), (9.0, 5.0, True)],
)  # fmt: skip
def test_success_is_a_score_at_least_the_minimum(
    score: float | None, min_score: float | None, expected: bool
) -> None:
    assert succeeded(score, min_score) is expected


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
