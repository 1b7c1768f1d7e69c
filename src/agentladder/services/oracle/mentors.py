"""Mentors: the best outputs of expert agents per task type, kept as examples.

An expert at a task type may mentor (the level-up specification). The proposals its
agents make in deliberations, when scored at least ``mentor_min_score``, are kept (the
``mentor_keep`` best per task type); when the config enables it (``mentor_examples`` > 0)
that many are included in the prompts of agents below expert for that task type.
The examples are rebuilt from stored deliberations at start (``load``).
"""

from __future__ import annotations

from agentladder.config import OrchestratorSettings
from agentladder.domain.deliberation_record import DeliberationRecord, DeliberationStatus

__all__ = ["DEFAULT_TASK_TYPE", "Mentors"]

DEFAULT_TASK_TYPE = "deliberation"


class Mentors:
    """Examples by task type, best first."""

    def __init__(self, settings: OrchestratorSettings) -> None:
        self.settings = settings
        self._best: dict[str, list[tuple[float, str, str]]] = {}  # score, id, content

    def learn(self, record: DeliberationRecord) -> None:
        """Keep the mentors' good proposals of a completed deliberation."""
        if record.status is not DeliberationStatus.COMPLETED:
            return
        task_type = record.task_type or DEFAULT_TASK_TYPE
        kept = self._best.setdefault(task_type, [])
        floor = self.settings.mentor_min_score
        for round_ in record.rounds:
            for p in round_.proposals:
                score = p.aggregated_score
                if p.mentor and p.content and score is not None and score >= floor:
                    kept.append((score, f"{record.id}/{round_.number}/{p.agent_id}", p.content))
        kept.sort(key=lambda item: (-item[0], item[1]))
        del kept[self.settings.mentor_keep :]

    def examples(self, task_type: str | None) -> tuple[str, ...]:
        """What to show agents below expert for ``task_type`` (none when disabled)."""
        count = self.settings.mentor_examples
        kept = self._best.get(task_type or DEFAULT_TASK_TYPE, [])
        return tuple(content for _, _, content in kept[:count])

    def load(self, records: list[DeliberationRecord]) -> None:
        """Rebuild from stored deliberations (oldest first)."""
        for record in records:
            self.learn(record)
