"""The stored evidence as one table of observations, in an order that does not depend on
the order the evidence arrived in (events by key, then their own contents in order); built
by ``table.py`` (``observations_of``, or page by page from a store's log).

An observation is either a **score** (a number on 0-10 from one source: a peer evaluating
another agent's proposal, a judge, the aggregated score of a report) or a **binary**
outcome (a Sentinel's verdict, a judgment with only ``success``) of one agent at one task
type, at the time it happened. Scores of one deliberation share its offset (``group``).

Sources are named by kind: ``agent:<id>`` (with ``#<k>`` after the agent's k-th model
change: a new model is a new evaluator), ``judge:<name>``, and ``aggregate``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

__all__ = ["Index", "Observations", "agent_source", "judge_source"]

Floats = npt.NDArray[np.float64]
Index = npt.NDArray[np.int32]
"""An index per observation (or message): 4 bytes each, where an int64 would take 8 (a
fit of 1,000,000 judgments holds several). Keys computed from them (an index times a
count plus another) are made in int64 (``np.int64(...)``), never in int32."""
Bools = npt.NDArray[np.bool_]


def agent_source(agent_id: str, epoch: int) -> str:
    """The source name of an agent as evaluator in its ``epoch``-th model."""
    return f"agent:{agent_id}" if epoch == 0 else f"agent:{agent_id}#{epoch}"


def judge_source(judge: str) -> str:
    """The source name of a judge."""
    return f"judge:{judge}"


@dataclass
class Observations:
    """Parallel arrays, one entry per observation, and the names their indices refer to.

    ``pair``: the (agent, task type) observed; ``source`` and ``group``: -1 for a binary
    outcome (no source) and for a score outside any deliberation (no shared offset);
    ``value``: the score, or 1.0 / 0.0 for a pass / fail; ``event``: which event it came
    from (a deliberation's scores of one author count as one update of its estimate).
    Groups and events are indexed by their keys' order; only their counts are kept
    (``group_count``, ``event_count``): a key per event would cost as much as the rows."""

    pairs: list[tuple[str, str]]
    sources: list[str]
    group_count: int
    event_count: int
    pair: Index
    source: Index
    group: Index
    event: Index
    value: Floats
    binary: Bools
    at: Floats
    changes: dict[str, list[float]] = field(default_factory=dict)
    history: Bools = field(default_factory=lambda: np.zeros(0, dtype=np.bool_))
    """Per observation: evidence of past work (an imported judgment's, one sent with
    ``history``), which no drift acts on (``chain.py``); every one live where empty."""

    def __post_init__(self) -> None:
        if len(self.history) != len(self.value):
            self.history = np.zeros(len(self.value), dtype=np.bool_)

    @property
    def agents(self) -> list[str]:
        """Every agent observed, sorted."""
        return sorted({a for a, _ in self.pairs})

    @property
    def types(self) -> list[str]:
        """Every task type observed, sorted."""
        return sorted({t for _, t in self.pairs})

    def __len__(self) -> int:
        return len(self.value)
