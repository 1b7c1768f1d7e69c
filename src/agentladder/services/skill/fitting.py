"""The fit's I/O around the pure parts: the whole log read from a store, fitted, and the
states to commit (the events appended while the fit ran folded onto them)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import TypeAdapter
from threadpoolctl import threadpool_limits

from agentladder.domain.skill.evidence import Evidence
from agentladder.domain.skill.fit import fit_observations
from agentladder.domain.skill.live import apply_evidence
from agentladder.domain.skill.observations import observations_of
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.snapshot import Snapshot, snapshot_of
from agentladder.domain.skill.state import AgentSkill, FitInfo, FleetSkill
from agentladder.store.base import Store
from agentladder.store.skills import FitFold, SkillEvent, SkillFitCommit

__all__ = ["Log", "fitted", "fitted_commit", "folded", "read_log"]

PAGE = 10_000
_EVIDENCE: TypeAdapter[Evidence] = TypeAdapter(Evidence)


@dataclass(frozen=True)
class Log:
    """Every event's evidence, and the seq of the last one."""

    evidence: list[Evidence]
    seq: int


async def read_log(store: Store, upto: int | None = None) -> Log:
    """The store's skill log from the start (to ``upto`` when given), checked gapless."""
    evidence: list[Evidence] = []
    after = 0
    while page := await store.skill_events(after=after, limit=PAGE):
        for event in page:
            if upto is not None and event.seq > upto:
                return Log(evidence, after)
            if event.seq != after + 1:
                raise ValueError(f"skill log: seq {event.seq} follows {after}")
            evidence.append(_EVIDENCE.validate_json(event.payload))
            after = event.seq
    return Log(evidence, after)


def fitted(log: Log, rules: SkillRules, at: float) -> Snapshot:
    """Every state as the fit of the log gives it (pure, CPU-bound)."""
    if not log.evidence:
        info = FitInfo(seq=log.seq, events=0, observations=0, at=at, rules=rules.digest())
        return Snapshot({}, FleetSkill(fit=info))
    fit = fit_observations(observations_of(log.evidence), rules)
    return snapshot_of(fit, rules, log.seq, len(log.evidence), at)


def folded(
    snapshot: Snapshot, newer: Sequence[SkillEvent], rules: SkillRules
) -> dict[str, AgentSkill]:
    """The snapshot's states with the newer events' filter steps on them, in seq order."""
    states: dict[str, AgentSkill] = dict(snapshot.agents)
    for event in newer:
        update = apply_evidence(
            states, snapshot.fleet, _EVIDENCE.validate_json(event.payload), rules
        )
        states.update(update.agents)
    return states


FIT_SWITCH_S = 0.0005
"""The interpreter's switch interval while a fit runs beside the event loop (seconds)."""


def fitted_commit(log: Log, rules: SkillRules, at: float) -> FitFold:
    """The fit of the log, as the fold ``Store.commit_skill_fit`` calls. Its linear algebra
    runs on one BLAS thread: a fit runs beside the event loop (``serve`` fits in the
    background), and BLAS on every core left the loop's thread waiting for a core, so that
    an agent answering in 0.2 s of a 0.5 s deadline was cut by it. While it runs, the
    interpreter's switch interval is ``FIT_SWITCH_S`` (5 ms otherwise): the event loop,
    woken by a socket, waits at most that long for the fit's thread to hand it the
    interpreter."""
    switch = sys.getswitchinterval()
    sys.setswitchinterval(FIT_SWITCH_S)  # the loop gets the interpreter back sooner
    try:
        with threadpool_limits(limits=1, user_api="blas"):
            snapshot = fitted(log, rules, at)
    finally:
        sys.setswitchinterval(switch)

    def fold(newer: Sequence[SkillEvent]) -> SkillFitCommit:
        return SkillFitCommit(folded(snapshot, newer, rules), snapshot.fleet)

    return fold
