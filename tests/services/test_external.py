"""Bring your own orchestrator: reported deliberations rank exactly like ones run here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from pydantic import ValidationError

from agentladder.domain.deliberation_record import SideEffectState
from agentladder.domain.external import ExternalDeliberation
from agentladder.errors import PayloadConflict
from agentladder.store.base import Store
from tests.services.test_orchestrator import EXAMPLES, ranks
from tests.services.world import world


def report(identifier: str, *rounds: Mapping[str, float | None]) -> ExternalDeliberation:
    return ExternalDeliberation.model_validate(
        {
            "deliberation_id": identifier,
            "rounds": [
                {"agents": {a: {"aggregated_score": s, "latency_ms": 120.0} for a, s in r.items()}}
                for r in rounds
            ],
        }
    )


def test_the_three_examples_reported_give_the_same_ranks(with_store: Any) -> None:
    """The spec's three deliberations reported from elsewhere: B → 1; A → 1; A → 2."""

    async def body(store: Store) -> None:
        orchestrator = await world(store, {})
        expected = [{"A": 0, "B": 1, "C": 0}, {"A": 1, "B": 1, "C": 0, "D": 0}, {"A": 2, "B": 1}]
        for number, (scores, after) in enumerate(zip(EXAMPLES, expected, strict=True)):
            record, duplicate = await orchestrator.report(report(f"ext-{number}", dict(scores)))
            await orchestrator.settle()
            assert not duplicate
            assert record.ranking.state is SideEffectState.APPLIED
            assert await ranks(store, *scores) == after
        stats = await store.get_stats("A")
        assert stats is not None
        assert stats.value.tasks_completed == 3
        assert stats.value.recent_latencies_ms == (120.0, 120.0, 120.0)

    with_store(body)


def test_a_report_applies_once_and_a_different_one_conflicts(with_store: Any) -> None:
    """The same report twice ranks once (duplicate); other rounds under that id: conflict."""

    async def body(store: Store) -> None:
        orchestrator = await world(store, {})
        first = report("ext-1", {"a": 7.0, "b": 9.0}, {"a": 8.0, "b": None})
        await orchestrator.report(first)
        _, duplicate = await orchestrator.report(first)
        await orchestrator.settle()
        assert duplicate
        assert await ranks(store, "a", "b") == {"a": 0, "b": 1}
        b = await store.get_stats("b")
        assert b is not None
        assert (b.value.deliberations_completed, b.value.tasks_failed) == (1, 1)
        with pytest.raises(PayloadConflict):
            await orchestrator.report(report("ext-1", {"a": 1.0, "b": 2.0}))

    with_store(body)


@pytest.mark.parametrize(
    "body",
    [
        {"deliberation_id": "x", "rounds": []},
        {"deliberation_id": "../x", "rounds": [{"agents": {"a": {"aggregated_score": 1}}}]},
        {"deliberation_id": "x", "rounds": [{"agents": {"a": {"aggregated_score": 11}}}]},
        {"deliberation_id": "x", "rounds": [{"agents": {"a b": {"aggregated_score": 1}}}]},
        {
            "deliberation_id": "x",
            "rounds": [{"agents": {"a": {"aggregated_score": 1, "latency_ms": -1}}}],
        },
        {"deliberation_id": "x", "rounds": [{"agents": {"a": {"aggregated_score": 1, "rank": 9}}}]},
    ],
)
def test_bad_reports_are_refused(body: dict[str, Any]) -> None:
    """No rounds, bad ids, scores over 10, bad names, negative latency, rank fields: refused."""
    with pytest.raises(ValidationError):
        ExternalDeliberation.model_validate(body)
