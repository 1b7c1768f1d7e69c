"""The fit's I/O around the pure parts: the whole log read from a store, fitted, and the
states to commit (the events appended while the fit ran folded onto them)."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from pydantic import TypeAdapter
from threadpoolctl import threadpool_limits

from agentladder.domain.skill.evidence import Evidence
from agentladder.domain.skill.fit import fit_observations
from agentladder.domain.skill.live import apply_evidence
from agentladder.domain.skill.observations import Observations
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.snapshot import Snapshot, snapshot_of
from agentladder.domain.skill.state import AgentSkill, FitInfo, FleetSkill, replace
from agentladder.domain.skill.table import TableBuilder
from agentladder.services.skill.heap import release_freed
from agentladder.store.base import Store
from agentladder.store.skills import FitFold, SkillEvent, SkillFitCommit

__all__ = [
    "STALE",
    "Folded",
    "Log",
    "events_after",
    "fit_of",
    "fitted",
    "fitted_commit",
    "folded",
    "read_log",
    "stamped",
]

PAGE = 10_000
_EVIDENCE: TypeAdapter[Evidence] = TypeAdapter(Evidence)


@dataclass(frozen=True)
class Log:
    """The log read into the fit's table: its observations, the seq of its last event, and
    how many events it holds (model changes and events without observations included)."""

    table: Observations
    seq: int
    events: int


async def read_log(store: Store, upto: int | None = None) -> Log:
    """The store's skill log from the start (to ``upto`` when given), checked in order
    (seqs increasing; gaps are allowed: ``store.skills``; the log's end is then ``upto``),
    read ``PAGE`` events at a time into the table (``domain.skill.table``): no more than
    one page of parsed evidence is held at once."""
    table = TableBuilder()
    after = 0
    end = False
    while not end and (page := await store.skill_events(after=after, limit=PAGE)):
        evidence: list[Evidence] = []
        for event in page:
            if upto is not None and event.seq > upto:
                end = True
                break
            if event.seq <= after:
                raise ValueError(f"skill log: seq {event.seq} follows {after}")
            evidence.append(_EVIDENCE.validate_json(event.payload))
            after = event.seq
        table.add(evidence)
        del evidence, page
    log = Log(table.build(), after if upto is None else upto, table.events)
    del table
    release_freed()  # the pages' evidence and the keys' sort: freed, not yet given back
    return log


async def events_after(store: Store, after: int) -> list[SkillEvent]:
    """Every skill event with a seq above ``after``, in order (read page by page)."""
    out: list[SkillEvent] = []
    while page := await store.skill_events(after=after, limit=PAGE):
        out.extend(page)
        after = page[-1].seq
    return out


def fitted(log: Log, rules: SkillRules, at: float) -> Snapshot:
    """Every state as the fit of the log gives it (pure, CPU-bound). A log without an
    observation (empty, or only model changes: an agent's new model before any score) has
    nothing to fit: no state, as the fit leaves none for an agent with only model changes
    (its system would be empty, which the solver refuses)."""
    if not log.events or not len(log.table):
        info = FitInfo(seq=log.seq, events=log.events, observations=0, at=at,
                       rules=rules.digest())  # fmt: skip
        return Snapshot({}, FleetSkill(fit=info))
    fit = fit_observations(log.table, rules)
    release_freed()  # the rounds' arrays
    return snapshot_of(fit, rules, log.seq, log.events, at)


STALE = -1
"""``AgentSkill.fit`` of a state folded from inputs of two fits (``stamped``)."""


def fit_of(fleet: FleetSkill) -> int:
    """The seq of the fit the fleet's state comes from (0: none yet)."""
    return fleet.fit.seq if fleet.fit is not None else 0


def stamped(
    changed: Mapping[str, AgentSkill], read: Mapping[str, AgentSkill], fleet: FleetSkill
) -> dict[str, AgentSkill]:
    """The states an event's filter step gives, each marked (``AgentSkill.fit``) with the
    fit its inputs come from: the fleet's, when every state read is marked with it too;
    ``STALE`` when some input is of another fit (a NATS fit's commit was writing its states
    meanwhile: ``store/nats/skillfit.py`` writes again every state not marked with its
    fit's seq). A replay marks every state with its fit."""
    mark = fit_of(fleet)
    if any(state.fit != mark for state in read.values()):
        mark = STALE
    return {a: s if s.fit == mark else replace(s, fit=mark) for a, s in changed.items()}


class Folded(Mapping[str, AgentSkill]):
    """A fit's states (``Snapshot.agents``, made when asked for) with the states that
    events after the fit changed over them, every one marked with the fit (``stamped``):
    only the changed ones are held."""

    def __init__(
        self, base: Mapping[str, AgentSkill], mark: int, changed: dict[str, AgentSkill]
    ) -> None:
        self.base, self.mark, self.changed = base, mark, changed

    def __getitem__(self, agent: str) -> AgentSkill:
        found = self.changed.get(agent)
        if found is not None:
            return found
        state = self.base[agent]
        return state if state.fit == self.mark else replace(state, fit=self.mark)

    def __iter__(self) -> Iterator[str]:
        yield from self.base
        yield from (agent for agent in self.changed if agent not in self.base)

    def __len__(self) -> int:
        return len(self.base) + sum(agent not in self.base for agent in self.changed)

    def __contains__(self, agent: object) -> bool:
        return agent in self.changed or agent in self.base

    def then(self, newer: Sequence[SkillEvent], fleet: FleetSkill, rules: SkillRules) -> Folded:
        """These states with the newer events' filter steps on them, in seq order (these
        left as they are). Every state an event reads is marked with the fit, so what it
        writes is too (``stamped`` with these states gives the same)."""
        changed, mark = dict(self.changed), self.mark
        states = Folded(self.base, mark, changed)
        for event in newer:
            update = apply_evidence(states, fleet, _EVIDENCE.validate_json(event.payload), rules)
            changed.update(
                {a: s if s.fit == mark else replace(s, fit=mark) for a, s in update.agents.items()}
            )
        return states


def folded(snapshot: Snapshot, newer: Sequence[SkillEvent], rules: SkillRules) -> Folded:
    """The snapshot's states with the newer events' filter steps on them, in seq order,
    every one marked with the snapshot's fit."""
    return Folded(snapshot.agents, fit_of(snapshot.fleet), {}).then(newer, snapshot.fleet, rules)


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

    done: list[tuple[list[int], Folded]] = []  # the last call's seqs and states

    def fold(newer: Sequence[SkillEvent]) -> SkillFitCommit:
        """The fit's states with ``newer`` folded on; a call whose events extend the last
        call's (as a NATS commit's calls do) folds only the ones added."""
        seqs = [event.seq for event in newer]
        if done and seqs[: len(done[0][0])] == done[0][0]:
            known, states = done[0]
            states = states.then(newer[len(known) :], snapshot.fleet, rules)
        else:
            states = folded(snapshot, newer, rules)
        done[:] = [(seqs, states)]
        return SkillFitCommit(states, snapshot.fleet)

    return fold
