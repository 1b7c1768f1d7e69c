"""The observation table as it was built before ``domain/skill/table.py``: the whole
evidence in a list, sorted by key, names gathered in Python lists. Kept as the reference
the paged table is compared with (``test_skill_table.py``)."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from agentladder.domain.skill.evidence import (
    AGGREGATE,
    DeliberationEvidence,
    Evidence,
    ModelChange,
    ScoreEvidence,
)
from agentladder.domain.skill.observations import agent_source, judge_source

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]


@dataclass
class Observations:
    """The table as it was: every group's and event's key kept."""

    pairs: list[tuple[str, str]]
    sources: list[str]
    groups: list[str]
    events: list[str]
    pair: Ints
    source: Ints
    group: Ints
    event: Ints
    value: Floats
    binary: Bools
    at: Floats
    changes: dict[str, list[float]] = field(default_factory=dict)


def _epoch(changes: dict[str, list[float]], agent: str, at: float) -> int:
    """How many of the agent's model changes happened at or before ``at``."""
    times = changes.get(agent)
    return 0 if not times else bisect.bisect_right(times, at)


def observations_of(evidence: Iterable[Evidence]) -> Observations:
    """Every observation of the evidence, in the canonical order."""
    ordered = sorted(evidence, key=lambda e: e.key)
    changes: dict[str, list[float]] = {}
    for item in ordered:
        if isinstance(item, ModelChange):
            changes.setdefault(item.agent_id, []).append(item.at)
    for times in changes.values():
        times.sort()
    rows: list[tuple[str, str, str | None, str | None, str, float, bool, float]] = []
    for item in ordered:
        if isinstance(item, DeliberationEvidence):
            rows.extend(_deliberation(item, changes))
        elif isinstance(item, ScoreEvidence):
            if item.score is not None:
                source = judge_source(item.judge)
                rows.append((item.agent_id, item.task_type, source, None, item.key,
                             item.score, False, item.at))  # fmt: skip
            else:
                rows.append((item.agent_id, item.task_type, None, None, item.key,
                             1.0 if item.success else 0.0, True, item.at))  # fmt: skip
        elif not isinstance(item, ModelChange):
            rows.append((item.agent_id, item.task_type, None, None, item.key,
                         1.0 if item.passed else 0.0, True, item.at))  # fmt: skip
    return _table(rows, changes)


def _deliberation(
    item: DeliberationEvidence, changes: dict[str, list[float]]
) -> list[tuple[str, str, str | None, str | None, str, float, bool, float]]:
    rows: list[tuple[str, str, str | None, str | None, str, float, bool, float]] = []
    for ev in item.evaluations:
        source = agent_source(ev.evaluator, _epoch(changes, ev.evaluator, item.at))
        rows.append((ev.author, item.task_type, source, item.key, item.key, ev.score, False,
                     item.at))  # fmt: skip
    for reported in item.aggregated:
        rows.append((reported.author, item.task_type, AGGREGATE, item.key, item.key,
                     reported.score, False, item.at))  # fmt: skip
    return rows


def _index(names: Sequence[str | None]) -> tuple[list[str], Ints]:
    known = sorted({n for n in names if n is not None})
    at = {n: i for i, n in enumerate(known)}
    return known, np.array([-1 if n is None else at[n] for n in names], dtype=np.int64)


def _table(
    rows: list[tuple[str, str, str | None, str | None, str, float, bool, float]],
    changes: dict[str, list[float]],
) -> Observations:
    pair_names = [(r[0], r[1]) for r in rows]
    pairs = sorted(set(pair_names))
    pair_at = {p: i for i, p in enumerate(pairs)}
    sources, source = _index([r[2] for r in rows])
    groups, group = _index([r[3] for r in rows])
    events, event = _index([r[4] for r in rows])
    return Observations(
        pairs=pairs,
        sources=sources,
        groups=groups,
        events=events,
        pair=np.array([pair_at[p] for p in pair_names], dtype=np.int64),
        source=source,
        group=group,
        event=event,
        value=np.array([r[5] for r in rows], dtype=np.float64),
        binary=np.array([r[6] for r in rows], dtype=np.bool_),
        at=np.array([r[7] for r in rows], dtype=np.float64),
        changes=changes,
    )
