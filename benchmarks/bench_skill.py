"""The skill model's cost: one deliberation's update against openskill's ``rate()`` on the
same deliberation, in the same run; and a full rebuild from a ledger of 1,000,000 events.

- update: 300 deliberations of 5 agents, 2 rounds (40 peer scores each), each one's filter
  step between fits (``domain.skill.apply_evidence``); openskill's Plackett-Luce ``rate``
  on the same deliberations' aggregated scores (one call each), for scale. Alternating
  runs, medians of 5.
- rebuild: a SQLite skill log of 1,000,000 events over 10,000 agents (950,000 judgments,
  50,000 deliberations of 5 agents), written straight into the table, then the fit of the
  whole log, committed (``SkillService.fit``: read, fit, write every state). Target:
  under 2 minutes.

Run: ``make bench`` or ``.venv/bin/python -m benchmarks skill`` (``SKILL_REBUILD=N`` for
a smaller ledger).
"""

from __future__ import annotations

import asyncio
import os
import random
import resource
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from openskill.models import PlackettLuce

from agentladder.domain.skill import (
    DeliberationEvidence,
    Evaluation,
    FleetSkill,
    ScoreEvidence,
    SkillRules,
    apply_evidence,
)
from agentladder.domain.skill.evidence import Evidence
from agentladder.services.skill.service import SkillService, evidence_hash
from agentladder.store.sqlite.store import SqliteStore
from benchmarks.fidelity_fleet import Scenario, make_fleet, stream

RULES = SkillRules()


def _stream(count: int) -> tuple[list[DeliberationEvidence], list[dict[str, float]]]:
    scenario = Scenario("speed", agents=8, noise=0.5)
    rng = random.Random(7)
    fleet = make_fleet(scenario, rng)
    sims = [s for s in stream(scenario, fleet, count * 2, rng) if len(s.agents) == 5][:count]
    evidence, aggregated = [], []
    for sim in sims:
        evidence.append(
            DeliberationEvidence(
                key=f"d{sim.index}",
                at=float(sim.index),
                task_type=sim.task_type,
                agents=sim.agents,
                evaluations=tuple(
                    Evaluation(evaluator=e, author=a, round=r, score=s) for e, a, r, s in sim.scores
                ),
            )
        )
        per: dict[str, list[float]] = {}
        for _, author, _, score in sim.scores:
            per.setdefault(author, []).append(score)
        aggregated.append({a: statistics.fmean(v) for a, v in per.items()})
    return evidence, aggregated


def _skill_run(events: list[DeliberationEvidence]) -> float:
    states: dict = {}  # type: ignore[type-arg]
    fleet = FleetSkill()
    start = time.perf_counter()
    for event in events:
        states.update(apply_evidence(states, fleet, event, RULES).agents)
    return (time.perf_counter() - start) / len(events)


def _openskill_run(scores: list[dict[str, float]]) -> float:
    model = PlackettLuce()
    ratings: dict = {}  # type: ignore[type-arg]
    start = time.perf_counter()
    for deliberation in scores:
        agents = sorted(deliberation)
        teams = [[ratings.get(a) or model.rating(name=a)] for a in agents]
        rated = model.rate(teams, scores=[deliberation[a] for a in agents])
        for agent, team in zip(agents, rated, strict=True):
            ratings[agent] = team[0]
    return (time.perf_counter() - start) / len(scores)


def update_speed() -> None:
    """Median microseconds per deliberation, alternating, and the ratio."""
    events, scores = _stream(300)
    mine, theirs = [], []
    for _ in range(5):
        mine.append(_skill_run(events))
        theirs.append(_openskill_run(scores))
    m, t = statistics.median(mine), statistics.median(theirs)
    print(
        f"filter step of one deliberation (5 agents, 40 peer scores): skill {m * 1e6:.0f} µs,"
        f" openskill rate() {t * 1e6:.0f} µs (ratio {m / t:.2f})"
    )


def _ledger(path: Path, events: int, agents: int) -> None:
    """Write ``events`` skill events straight into a new store's log."""
    asyncio.run(_create(path))
    rng = random.Random(11)
    names = [f"agent{i:05d}" for i in range(agents)]
    quality = {a: rng.uniform(3, 8.5) for a in names}
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA synchronous = OFF")
    rows = []
    for seq in range(1, events + 1):
        evidence: Evidence
        if seq % 20 == 0:
            chosen = rng.sample(names, 5)
            evidence = DeliberationEvidence(
                key=f"deliberation:{seq}", at=float(seq), task_type="general",
                agents=tuple(chosen),
                evaluations=tuple(
                    Evaluation(evaluator=e, author=a, round=1,
                               score=min(10.0, max(0.0, quality[a] + rng.gauss(0, 0.7))))
                    for e in chosen for a in chosen if a != e
                ),
            )  # fmt: skip
        else:
            agent = rng.choice(names)
            score = min(10.0, max(0.0, quality[agent] + rng.gauss(0, 1.0)))
            evidence = ScoreEvidence(
                key=f"judgment:{agent}:{seq}", at=float(seq), agent_id=agent,
                task_type="general", score=round(score, 2),
            )  # fmt: skip
        rows.append(
            (seq, evidence.key, evidence.kind, evidence.model_dump_json(),
             evidence_hash(evidence), evidence.at)
        )  # fmt: skip
        if len(rows) == 50_000:
            conn.executemany("INSERT INTO skill_events VALUES (?,?,?,?,?,?)", rows)
            conn.commit()
            rows = []
    conn.executemany("INSERT INTO skill_events VALUES (?,?,?,?,?,?)", rows)
    conn.commit()
    conn.close()


async def _create(path: Path) -> None:
    store = SqliteStore(path)
    await store.close()


async def _rebuild(path: Path) -> tuple[int, int]:
    """The fit of the whole log, committed (what ``agentladder skill rebuild`` does)."""
    store = SqliteStore(path)
    try:
        report = await SkillService(store, RULES).fit(force=True)
        return report.events, len(await store.list_skills())
    finally:
        await store.close()


def rebuild_speed() -> None:
    """Seconds to rebuild every state from a ledger of ``SKILL_REBUILD`` events."""
    events = int(os.environ.get("SKILL_REBUILD", "1000000"))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ledger.db"
        start = time.perf_counter()
        _ledger(path, events, 10_000)
        written = time.perf_counter() - start
        start, cpu = time.perf_counter(), time.process_time()
        count, agents = asyncio.run(_rebuild(path))
        took, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    verdict = "meets" if took < 120 else "MISSES"
    print(
        f"rebuild (fit and commit) of {count:,} events ({agents:,} agents; ledger written in"
        f" {written:.0f} s): {took:.1f} s ({cpu:.1f} s of CPU: on a shared machine the wall"
        f" time counts the waits for a core too), {count / took:,.0f} events/s, peak RSS"
        f" {peak:.0f} MB ({verdict} target < 120 s)"
    )


def main() -> None:
    """Both measures."""
    update_speed()
    rebuild_speed()


if __name__ == "__main__":
    main()
