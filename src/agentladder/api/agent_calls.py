"""What an agent's recent deliberations say of its own calls, for its dashboard page: each
call's latency apart from the calls that failed (a failure's latency is how long it took
to fail, not how fast the agent answers), and how many of the evaluations it was asked
for it failed (the evaluator's record: ``domain/attribution.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentladder.domain.deliberation_record import DeliberationRecord
from agentladder.domain.stats import LATENCY_WINDOW
from agentladder.services.deliberations.side_effects import outcomes_of

__all__ = ["Evaluations", "evaluations_of", "latency_series"]


@dataclass(frozen=True, slots=True)
class Evaluations:
    """Evaluations an agent was asked for in some deliberations, and how many it failed."""

    asked: int
    failed: int
    deliberations: int

    @property
    def failure_rate(self) -> float | None:
        """failed / asked; None when it was asked for none."""
        return self.failed / self.asked if self.asked else None


def evaluations_of(agent_id: str, records: Sequence[DeliberationRecord]) -> Evaluations:
    """Its evaluations in ``records`` (the deliberations it took part in)."""
    asked = failed = counted = 0
    for record in records:
        outcome = outcomes_of(record).get(agent_id)
        if outcome is not None:
            asked += outcome.evaluations
            failed += outcome.evaluations_failed
            counted += 1
    return Evaluations(asked, failed, counted)


def latency_series(
    agent_id: str, records: Sequence[DeliberationRecord]
) -> list[list[float | None]] | None:
    """``[calls, answered ms, failed ms]`` of its last ``LATENCY_WINDOW`` calls in
    ``records`` (newest first, as listed), oldest first: each call in one of the two
    series, None in the other; None when the records hold none of its calls."""
    calls = [
        (s.latency_ms, s.ok)
        for record in reversed(records)
        for s in record.submissions
        if s.agent_id == agent_id
    ][-LATENCY_WINDOW:]
    if not calls:
        return None
    return [
        [float(i) for i in range(1, len(calls) + 1)],
        [ms if ok else None for ms, ok in calls],
        [None if ok else ms for ms, ok in calls],
    ]
