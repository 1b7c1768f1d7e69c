"""The fit and its snapshot hold memory in proportion to the observations, at a bounded
cost each: what made a 1,000,000-judgment fit need more than a gigabyte was a Python tuple
per event for the histories and arrays held from one round into the next; what made it
need 646 MB, int64 indices, a message copied from each judgment and the EM step's
temporaries made for every observation at once; then the large solver's fitted values held
for every observation, the chains' arrays beside their inputs, a working value and extra
variance for every score where only those at a bound have one, and the snapshot's paths
made for every event where only the last points of each pair are read."""

from __future__ import annotations

import random
import tracemalloc

import pytest

from agentladder.domain.skill import SkillRules, fit_observations, observations_of, snapshot_of
from agentladder.domain.skill import blocks as skill_blocks
from agentladder.domain.skill.evidence import ScoreEvidence

FEW, MANY = 10_000, 40_000
PER_OBSERVATION = 170
"""Bytes of traced peak each observation may add to the fit and its snapshot (145
measured; 185 before the fitted values made per block, the chains in place, the censored
values kept apart and the snapshot's paths made per pair, 297 before int32 indices, a
message per judgment and the EM step in blocks, 454 before that)."""
ROUNDS_PER_OBSERVATION = 125
"""Bytes of traced peak each observation may add to the fit's rounds, its result included
(103 measured; 155 before the fitted values made per block, the chains in place and the
censored values kept apart)."""
BLOCK = 2_048
"""The blocks' size here: as small beside these fits as 65,536 is beside 1,000,000."""
TABLE_PER_OBSERVATION = 40
"""Bytes of the table each judgment takes (33: four int32 indices, two float64, a bool;
49 with int64 indices)."""


def _judgments(count: int) -> list[ScoreEvidence]:
    rng = random.Random(15)
    out = []
    for i in range(count):
        agent = f"agent-{rng.randrange(300)}"
        task_type = rng.choice(("sql", "code", "docs"))
        score = round(rng.uniform(0, 10), 2)
        key = f"judgment:{agent}:eval-{i}"
        success = rng.random() < 0.8
        out.append(ScoreEvidence(key=key, at=1.7e9 + i, agent_id=agent, task_type=task_type,
                                 score=score, success=success))  # fmt: skip
    return out


def _peak(count: int) -> int:
    """The traced peak of fitting ``count`` judgments and making their states."""
    table = observations_of(_judgments(count))
    rules = SkillRules(exact_limit=100)  # the large fleet's solver, as at 1,000,000
    tracemalloc.start()
    try:
        snapshot = snapshot_of(fit_observations(table, rules), rules, 1, count, 1.8e9)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(snapshot.agents) == 300
    return peak


def test_the_fit_peak_grows_by_a_bounded_cost_per_observation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """30,000 more judgments add less than ``PER_OBSERVATION`` bytes each to the peak."""
    monkeypatch.setattr(skill_blocks, "BLOCK", BLOCK)
    few, many = _peak(FEW), _peak(MANY)
    per = (many - few) / (MANY - FEW)
    print(f"fit and snapshot peak: {few >> 20} MB, {many >> 20} MB: {per:.0f} B an observation")
    assert per < PER_OBSERVATION


def test_the_rounds_peak_grows_by_a_bounded_cost_per_observation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """30,000 more judgments add less than ``ROUNDS_PER_OBSERVATION`` bytes each to the
    peak of the fit's rounds (the large solver, the chains, the EM step)."""
    monkeypatch.setattr(skill_blocks, "BLOCK", BLOCK)
    rules = SkillRules(exact_limit=100)
    peaks = []
    for count in (FEW, MANY):
        table = observations_of(_judgments(count))
        tracemalloc.start()
        try:
            fit = fit_observations(table, rules)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert not fit.exact
        peaks.append(peak)
    per = (peaks[1] - peaks[0]) / (MANY - FEW)
    print(f"the fit's rounds: {per:.0f} B an observation")
    assert per < ROUNDS_PER_OBSERVATION


def test_the_table_takes_a_bounded_size_per_judgment() -> None:
    """A judgment's row of the table takes less than ``TABLE_PER_OBSERVATION`` bytes."""
    table = observations_of(_judgments(FEW))
    columns = (table.pair, table.source, table.group, table.event, table.value, table.binary,
               table.at)  # fmt: skip
    per = sum(column.nbytes for column in columns) / len(table)
    assert per < TABLE_PER_OBSERVATION
