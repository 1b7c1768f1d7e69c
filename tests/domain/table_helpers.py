"""A generated skill log of every kind of evidence, and the check that a table equals the
one the reference (``observations_reference.py``) builds from the same evidence."""

from __future__ import annotations

import random

import numpy as np

from agentladder.domain.skill.evidence import (
    DeliberationEvidence,
    Evaluation,
    Evidence,
    ModelChange,
    ReportedScore,
    ScoreEvidence,
    VerdictEvidence,
)
from agentladder.domain.skill.observations import Observations
from tests.domain import observations_reference

AGENTS = [f"agent-{i}" for i in range(7)]
TYPES = ["code", "docs", "sql"]
LONG = "x" * 70  # keys sharing more than the table's sorted prefix (64 bytes)


def generated_log(count: int, seed: int, exotic: bool = False) -> list[Evidence]:
    """``count`` events in a shuffled arrival order: deliberations (peer evaluations, and
    reported aggregates), judgments with a score by several judges or only a success,
    verdicts, model changes before and after an agent's evaluations, keys longer than the
    sorted prefix and (``exotic``) keys with non-ASCII text and a trailing NUL."""
    rng = random.Random(seed)
    out: list[Evidence] = []
    for i in range(count):
        kind = rng.random()
        at = 1_000.0 + rng.randrange(50) * 10.0  # equal times happen
        stem = rng.choice(["", LONG, "é" if exotic else "", "\U0001f600" if exotic else ""])
        key = f"{stem}{rng.randrange(10 ** rng.randrange(1, 5))}-{i}"
        if exotic and rng.random() < 0.05:
            key += "\x00"
        task = rng.choice(TYPES)
        if kind < 0.3:
            members = rng.sample(AGENTS, rng.randrange(2, 5))
            evaluations = tuple(
                Evaluation(evaluator=e, author=a, round=1, score=round(rng.uniform(0, 10), 2))
                for a in members
                for e in members
                if e != a and rng.random() < 0.8
            )
            aggregated = (
                tuple(ReportedScore(author=a, round=1, score=rng.uniform(0, 10)) for a in members)
                if rng.random() < 0.2
                else ()
            )
            out.append(DeliberationEvidence(key=f"deliberation:{key}", at=at, task_type=task,
                                            agents=tuple(members), evaluations=evaluations,
                                            aggregated=aggregated))  # fmt: skip
        elif kind < 0.75:
            scored = rng.random() < 0.8
            out.append(ScoreEvidence(key=f"judgment:{key}", at=at, agent_id=rng.choice(AGENTS),
                                     task_type=task,
                                     score=round(rng.uniform(0, 10), 1) if scored else None,
                                     success=rng.random() < 0.7,
                                     judge=rng.choice(["oracle", "gpt", "human"])))  # fmt: skip
        elif kind < 0.92:
            out.append(VerdictEvidence(key=f"verdict:{key}", at=at, agent_id=rng.choice(AGENTS),
                                       task_type=task, passed=rng.random() < 0.6))  # fmt: skip
        else:
            out.append(ModelChange(key=f"model:{key}", at=at, agent_id=rng.choice(AGENTS),
                                   model_name=f"m{i}"))  # fmt: skip
    rng.shuffle(out)
    return out


def assert_same_table(table: Observations, evidence: list[Evidence]) -> None:
    """Every array and name of ``table`` equals the reference's for ``evidence`` (dtypes
    included: the index columns in int32, the reference's in int64); the groups and events
    by their counts."""
    old = observations_reference.observations_of(evidence)
    assert table.pairs == old.pairs
    assert table.sources == old.sources
    assert table.group_count == len(old.groups)
    assert table.event_count == len(old.events)
    assert table.changes == old.changes
    for name in ("pair", "source", "group", "event", "value", "binary", "at"):
        new_column, old_column = getattr(table, name), getattr(old, name)
        index = name in ("pair", "source", "group", "event")
        assert new_column.dtype == (np.int32 if index else old_column.dtype), name
        assert np.array_equal(new_column, old_column), name
