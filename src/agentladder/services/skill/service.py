"""``SkillService``: evidence applied once per key, a fit of the whole log, estimates read
as of now.

Every observation becomes one skill event in the store's log, applied with the states it
changes in one atomic unit (``Store.apply_skill``): a filter step from the last fit
(``domain.skill.live``). ``fit`` reads the whole log, fits it (``domain.skill.fit``: the
result depends on the set of events, not their order) off the event loop, and replaces
every state (``Store.commit_skill_fit``); ``fit_now`` is the fit for callers who want one
now, one at a time and shared (``shared.py``). ``freshness`` says what awaits the next fit.
The same key twice counts once; the same key with other evidence is a ``PayloadConflict``.

On a store with a skill queue (``Store.skill_queue``: NATS with ``skill_queue=on``), a
judgment's evidence is written with its award instead (``award``) and applied by the
queue's leased applier (``applier.py``) through ``observe_many``; ``freshness`` counts it
as pending until then, and ``drained`` waits for the queue to be empty.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from pydantic import TypeAdapter

from agentladder.domain.skill.board import SkillEntry, skill_board, skill_view
from agentladder.domain.skill.evidence import DEFAULT_JUDGE, Evidence, ScoreEvidence
from agentladder.domain.skill.live import apply_evidence, overall_types
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.state import AgentSkill, FitInfo, FleetSkill, new_skill
from agentladder.errors import InvalidInput, NotFound, PayloadConflict, StoreUnavailable
from agentladder.services.clock import Clock, SystemClock
from agentladder.services.offload import off_loop
from agentladder.services.skill.fitting import fit_of, fitted_commit, read_log, stamped
from agentladder.services.skill.freshness import FitSchedule, Freshness
from agentladder.services.skill.shared import SharedRun
from agentladder.store.base import OracleApplied, OracleFold, SkillItem, Store
from agentladder.store.skillqueue import QueueState, SkillQueue
from agentladder.store.skills import SkillApplied, SkillCommit, SkillEvent, SkillFold

__all__ = [
    "EVIDENCE",
    "AgentSkills",
    "FitReport",
    "Freshness",
    "SkillService",
    "checked",
    "evidence_hash",
    "evidence_json",
    "payload_of",
]

DRAIN_POLL_S = 0.05
"""How often ``drained`` looks at the queue."""
PENDING_FOR_S = 1.0
"""How long one count of the evidence awaiting the fit answers ``pending`` (per fit): a
skill answer's ``pending`` may be that much behind the log."""

log = logging.getLogger(__name__)

EVIDENCE: TypeAdapter[Evidence] = TypeAdapter(Evidence)
"""Reads a stored skill event's payload back into its evidence."""


@dataclass(frozen=True, slots=True)
class AgentSkills:
    """One agent's skill as shown: overall, at every task type it has evidence in, and at
    the fleet's other task types, as predicted; overall is the mean of the last two."""

    overall: SkillEntry
    task_types: list[SkillEntry]
    predicted: list[SkillEntry]


def evidence_hash(evidence: Evidence) -> str:
    """The fingerprint of the evidence without its time (a retry later is the same) or
    whether it was deferred: the SHA-256 of its JSON, whose fields pydantic writes in their
    declared order (a judgment by the default judge without the field, as before judges
    were named)."""
    leave = {"at"}
    if isinstance(evidence, ScoreEvidence):
        leave.add("deferred")
        if evidence.judge == DEFAULT_JUDGE:
            leave.add("judge")
    return hashlib.sha256(evidence.model_dump_json(exclude=leave).encode()).hexdigest()


def evidence_json(evidence: Evidence) -> str:
    """The stored text of the evidence: a judgment's ``deferred`` only when set (the text
    of every other evidence as before the field existed)."""
    if isinstance(evidence, ScoreEvidence) and not evidence.deferred:
        return evidence.model_dump_json(exclude={"deferred"})
    return evidence.model_dump_json()


def payload_of(event: SkillEvent) -> Evidence:
    """The evidence a stored event holds."""
    return EVIDENCE.validate_json(event.payload)


def checked(applied: SkillApplied, evidence: Evidence) -> SkillApplied:
    """``applied``, or ``PayloadConflict`` when it found the key applied with other evidence."""
    if not applied.created and applied.event.payload_hash != evidence_hash(evidence):
        raise PayloadConflict(f"skill evidence {evidence.key}")
    return applied


@dataclass(frozen=True, slots=True)
class FitReport:
    """What one fit did: the log's end it read (``seq``), how many events, whether it ran
    (not when the last fit had read the log to its end with the same rules), when it ran
    (``at``: the fleet's ``FitInfo.at``; the last fit's when it did not run) and how long
    it took (``seconds``: reading the log, fitting and committing; 0 when it did not run)."""

    seq: int
    events: int
    ran: bool
    at: float | None = None
    seconds: float = 0.0


class SkillService:
    """The evidence model over one store."""

    def __init__(
        self, store: Store, rules: SkillRules | None = None, clock: Clock | None = None
    ) -> None:
        self.store = store
        self.rules = rules or SkillRules()
        self.clock = clock or SystemClock()
        self._fitting = asyncio.Lock()
        self._committing: asyncio.Future[None] | None = None  # a fit's commit in flight
        self._counted: tuple[int, int, float] | None = None  # after, pending, when
        self.fit_now = SharedRun(self.fit)
        """``fit`` for callers who want one now (``POST /skills/fit``, ``?fresh=true``, the
        periodic fitter): one at a time, shared by those who ask meanwhile (``shared.py``)."""
        self.schedule = FitSchedule()
        self.queue: SkillQueue | None = store.skill_queue()
        """Where a judgment's evidence goes when the store keeps a queue (else None)."""
        self._queued: tuple[QueueState, float] | None = None  # the last state, when

    async def award(
        self, agent_id: str, key: str, fold: OracleFold, evidence: Evidence
    ) -> OracleApplied | None:
        """A judgment's award (``Store.apply_oracle`` of ``agent_id``'s ``key``) written with
        its one-agent ``evidence`` for the queue's applier (``SkillQueue.award``; the store
        must keep a queue): both or neither. ``SkillQueueFull`` before anything is stored
        when the queue is full."""
        queue = self.queue
        if queue is None:
            raise TypeError("this store keeps no skill queue: observe the evidence")
        if evidence.touched() != (agent_id,):
            raise TypeError(f"only {agent_id}'s own evidence goes with its award: {evidence.key}")
        await queue.admit()
        applied = await queue.award(agent_id, key, fold, evidence_json(evidence).encode())
        self._queued = None
        return applied

    async def queue_state(self) -> QueueState:
        """The queue's state, read at most once every ``PENDING_FOR_S`` (empty without a
        queue)."""
        if self.queue is None:
            return QueueState(0, None)
        now = time.monotonic()
        cached = self._queued
        if cached is not None and now - cached[1] < PENDING_FOR_S:
            return cached[0]
        state = await self.queue.state()
        self._queued = (state, now)
        return state

    async def drained(self, timeout_s: float = 60.0) -> None:
        """Return once every evidence queued before the call is applied (the queue empty
        at a look); ``StoreUnavailable`` after ``timeout_s``. Read-your-writes for skill on
        a store with a queue: after a judgment, wait here before reading its skill."""
        if self.queue is None:
            return
        deadline = time.monotonic() + timeout_s
        while (await self.queue.state()).depth:
            if time.monotonic() > deadline:
                raise StoreUnavailable(f"the skill queue was not drained in {timeout_s:g} s")
            await asyncio.sleep(DRAIN_POLL_S)
        self._queued = None

    def now(self) -> float:
        """The clock's time in seconds."""
        return self.clock.now().timestamp()

    def _fold(self, evidence: Evidence, digest: str) -> SkillFold:
        rules = self.rules

        def fold(states: Mapping[str, AgentSkill], fleet: FleetSkill) -> SkillCommit:
            update = apply_evidence(states, fleet, evidence, rules)
            event = SkillEvent(
                key=evidence.key,
                kind=evidence.kind,
                payload=evidence_json(evidence),
                payload_hash=digest,
                at=evidence.at,
            )
            return SkillCommit(event, stamped(update.agents, states, fleet), None)

        return fold

    async def observe(self, evidence: Evidence) -> SkillApplied:
        """Apply the evidence once per key; ``PayloadConflict`` when the key was applied
        with other evidence."""
        applied = await self.store.apply_skill(*self.item(evidence))
        self._counted = None
        return checked(applied, evidence)

    def item(self, evidence: Evidence) -> SkillItem:
        """What ``observe`` gives the store (``Store.apply_skill``): the key, the agents and
        the fold; for a store write that applies it with another (``checked`` then)."""
        self._counted = None  # what awaits the fit is counted anew
        return evidence.key, evidence.touched(), self._fold(evidence, evidence_hash(evidence))

    async def observe_many(
        self, evidence: Sequence[Evidence], *, fresh: bool = False
    ) -> list[SkillApplied]:
        """``observe`` for each, in order, in one ``Store.apply_skill_many`` (``fresh``: its
        keys are most likely new). A key applied before with other evidence is left as it
        was: its entry's ``payload_hash`` then differs from ``evidence_hash`` of the one
        given (where ``observe`` raises)."""
        items = [(e.key, e.touched(), self._fold(e, evidence_hash(e))) for e in evidence]
        applied = await self.store.apply_skill_many(items, fresh=fresh)
        self._counted = None
        return applied

    async def needs_fit(self) -> bool:
        """Whether ``fit`` has something to do: the log has events, and no fit read it to
        its end with these rules."""
        return await self._stale((await self.store.get_fleet_skill()).fit)

    async def _stale(self, done: FitInfo | None) -> bool:
        """``needs_fit`` after the last fit ``done``."""
        if done is None:
            return bool(await self.store.skill_events(after=0, limit=1))
        return done.rules != self.rules.digest() or bool(
            await self.store.skill_events(after=done.seq, limit=1)
        )

    async def fit(self, *, force: bool = False) -> FitReport:
        """Fit the whole log and replace every state (off the event loop); nothing to do
        when the last fit read the log to its end with the same rules, unless ``force``."""
        async with self._fitting:
            fleet = await self.store.get_fleet_skill()
            done = fleet.fit
            if done is not None and not force and not await self._stale(done):
                return FitReport(done.seq, done.events, ran=False, at=done.at)
            started = time.perf_counter()
            log = await read_log(self.store)
            at = self.now()
            commit = await off_loop(fitted_commit, log, self.rules, at)
            seq, events = log.seq, log.events
            del log  # the table: the fold keeps the fit's states only
            # Once begun, a commit runs to its end even when the fit is cancelled (a stop):
            # on NATS it writes the states in batches before the fleet's, so one cut in the
            # middle would leave states that no replay of the log gives; ``settle`` waits.
            self._committing = asyncio.ensure_future(self.store.commit_skill_fit(seq, commit))
            await asyncio.shield(self._committing)
            return FitReport(seq, events, ran=True, at=at, seconds=time.perf_counter() - started)

    async def freshness(self, fleet: FleetSkill | None = None) -> Freshness:
        """How fresh the estimates are (``fleet``: the fleet's state as just read, else
        read now): the last fit's time, the events stored after its seq (counted by the
        store, not read) plus the evidence queued and not applied yet, and when this
        instance's fitter next fits them."""
        if fleet is None:
            fleet = await self.store.get_fleet_skill()
        pending = await self._pending(fit_of(fleet)) + (await self.queue_state()).depth
        running = self._fitting.locked() or self.fit_now.running
        return Freshness(
            fitted_at=None if fleet.fit is None else fleet.fit.at,
            pending=pending,
            next_fit_within_s=self.schedule.within(pending, running),
        )

    async def _pending(self, after: int) -> int:
        """The events stored after seq ``after``, counted at most once every
        ``PENDING_FOR_S`` per fit (a count on NATS asks the server twice: 10 to 57 ms on a
        busy machine; every ``GET /agents/{agent_id}`` says it), and anew after this
        instance stored evidence."""
        now = time.monotonic()
        cached = self._counted
        if cached is not None and cached[0] == after and now - cached[2] < PENDING_FOR_S:
            return cached[1]
        pending = await self.store.count_skill_events(after=after)
        self._counted = (after, pending, now)
        return pending

    async def close(self) -> None:
        """Cancel the shared fits in flight (``fit_now``) and wait for a commit begun."""
        await self.fit_now.close()
        await self.settle()

    async def settle(self) -> None:
        """Wait for a fit's commit in flight, if any, to end (its failure is the fit's)."""
        committing = self._committing
        if committing is None:
            return
        await asyncio.wait((committing,))
        if not committing.cancelled() and committing.exception() is not None:
            log.warning("the skill fit's last commit failed: %s", committing.exception())

    async def board(self, task_type: str | None = None, limit: int = 100) -> list[SkillEntry]:
        """The agents with evidence, best first, in tiers (overall without a task type);
        computed on a CPU thread (every agent's estimate: ``services/offload.py``)."""
        if isinstance(limit, bool) or not 1 <= limit <= 1000:
            raise InvalidInput("limit", limit, "must be an integer from 1 to 1000")
        skills = await self.store.list_skills()
        fleet = await self.store.get_fleet_skill()
        board = await off_loop(skill_board, skills, fleet, task_type, self.now(), self.rules)
        return board[:limit]

    async def of_agent(self, agent_id: str) -> AgentSkills:
        """One agent's overall skill, its skill at every task type it has evidence in and
        at the fleet's others (predicted); ``NotFound`` for an agent without evidence."""
        found = (await self.store.get_skills([agent_id])).get(agent_id)
        if found is None or found.overall.n == 0:
            raise NotFound("skill", agent_id)
        fleet = await self.store.get_fleet_skill()
        now, rules = self.now(), self.rules
        return AgentSkills(
            overall=skill_view(found, fleet, None, now, rules),
            task_types=[skill_view(found, fleet, t, now, rules) for t in sorted(found.types)],
            predicted=[
                skill_view(found, fleet, t, now, rules)
                for t in overall_types(found, fleet)
                if t not in found.types
            ],
        )

    async def overall(self, agent_ids: Collection[str]) -> dict[str, SkillEntry]:
        """The overall skill of each agent (a new agent's prior for one without evidence)."""
        found = await self.store.get_skills(agent_ids)
        fleet = await self.store.get_fleet_skill()
        now = self.now()
        return {
            agent: skill_view(
                found.get(agent) or new_skill(agent, self.rules), fleet, None, now, self.rules
            )
            for agent in agent_ids
        }

    async def model_changes(self, agent_id: str) -> int:
        """How many model changes the agent's state has seen."""
        found = (await self.store.get_skills([agent_id])).get(agent_id)
        return 0 if found is None else found.model_changes
