"""A fit's states are made from the fit when a store writes them, a group at a time: the
memory a fit's snapshot and commit hold does not grow with every agent's state and its
JSON at once (at 1,000,000 judgments over 10,000 agents the states with their history took
about 100 MB and their JSON 47 MB more, held together beside the fit's result)."""

from __future__ import annotations

import asyncio
import random
import tracemalloc
from collections.abc import Mapping, Sequence
from pathlib import Path

from agentladder.domain.skill import (
    AgentSkill,
    FleetSkill,
    SkillRules,
    fit_observations,
    snapshot_of,
)
from agentladder.domain.skill.evidence import ScoreEvidence
from agentladder.services.skill.fitting import folded, read_log
from agentladder.services.skill.service import evidence_hash
from agentladder.store.skills import SkillCommit, SkillEvent, SkillFitCommit, SkillFold
from agentladder.store.url import open_store

FEW, MANY = 600, 2_400
JUDGMENTS = 6
"""Each agent's judgments."""
PER_AGENT = 500
"""Bytes of traced peak each agent may add to a fit's snapshot and commit, above what the
fit's result holds (measured: 7 here; 3,336 when every state was made at once, then its
JSON: the states here have 7 points of history, 64 at most)."""


def _unfolded(event: SkillEvent) -> SkillFold:
    def fold(states: Mapping[str, AgentSkill], fleet: FleetSkill) -> SkillCommit:
        return SkillCommit(event, {}, None)

    return fold


async def _peak(path: Path, agents: int) -> int:
    """The traced peak of making and committing the states of a fit of ``agents`` agents'
    judgments, above what the fit's result holds."""
    rng = random.Random(agents)
    store = await open_store(f"sqlite:///{path}")
    try:
        items = []
        for i in range(agents * JUDGMENTS):
            e = ScoreEvidence(key=f"j{i}", at=1.7e9 + i, agent_id=f"agent-{i % agents}",
                              task_type=rng.choice(("sql", "code", "docs")),
                              score=round(rng.uniform(0, 10), 2))  # fmt: skip
            event = SkillEvent(key=e.key, kind=e.kind, payload=e.model_dump_json(),
                               payload_hash=evidence_hash(e), at=e.at)  # fmt: skip
            items.append((e.key, e.touched(), _unfolded(event)))
        await store.apply_skill_many(items)
        log = await read_log(store)
        rules = SkillRules(exact_limit=100)
        tracemalloc.start()
        try:
            fit = fit_observations(log.table, rules)
            del log
            held, _ = tracemalloc.get_traced_memory()  # the fit's result
            tracemalloc.reset_peak()
            snapshot = snapshot_of(fit, rules, 1, agents * JUDGMENTS, 1.8e9)
            del fit  # what the states need of it stays with them

            def fold(newer: Sequence[SkillEvent]) -> SkillFitCommit:
                return SkillFitCommit(folded(snapshot, newer, rules), snapshot.fleet)

            await store.commit_skill_fit(agents * JUDGMENTS, fold)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert len(await store.list_skills()) == agents
        return peak - held
    finally:
        await store.close()


def test_a_fit_commit_holds_no_state_of_every_agent_at_once(tmp_path: Path) -> None:
    """1,800 more agents add less than ``PER_AGENT`` bytes each to the peak of the fit
    with its snapshot and its commit to SQLite."""
    few = asyncio.run(_peak(tmp_path / "few.db", FEW))
    many = asyncio.run(_peak(tmp_path / "many.db", MANY))
    per = (many - few) / (MANY - FEW)
    print(f"fit, snapshot and commit peak: {few >> 10} KB, {many >> 10} KB: {per:.0f} B an agent")
    assert per < PER_AGENT
