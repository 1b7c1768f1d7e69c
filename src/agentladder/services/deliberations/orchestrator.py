"""The orchestrator: deliberations from request to result, then ranking and judgments.

``submit`` checks who qualifies (unknown, offline, unreachable, below ``min_agent_rank``,
not allowed the complexity: excluded; fewer than two: ``TooFewAgents``), or with
``select`` lets routing choose (``services/routing``, the choice kept in the record),
stores the record as queued and runs it in the background; ``run`` runs it at once and waits for the
result, storing the record only when it ends. While it runs, a record is kept and served
from memory (round by round); it is stored when queued (``submit``) and when it ends
(completed or failed). After completion the ranking update and the Oracle's judgments
run as a side effect that never blocks or fails the job (``settle`` waits for them); a
deliberation that failed has its calls counted and its judgments abandoned
(``unfinished.py``). ``close`` interrupts what runs or waits: each is stored failed
("interrupted", with the cause), with the calls made and their cost.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
import uuid
from collections import Counter
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from agentladder.config import AgentSettings, OrchestratorSettings
from agentladder.domain.attribution import outcomes
from agentladder.domain.deliberation import DeliberationRequest
from agentladder.domain.deliberation_record import (
    DeliberationRecord,
    DeliberationStatus,
    SideEffect,
    SideEffectState,
    best_proposal,
)
from agentladder.domain.external import ExternalDeliberation, reported_record, reported_rounds
from agentladder.domain.privileges import TaskAllowance
from agentladder.domain.redact import redacted_fields
from agentladder.domain.scoring import deliberation_scores
from agentladder.domain.text import STORED
from agentladder.errors import Busy, InvalidInput, NotFound, PayloadConflict
from agentladder.providers.base import ProposeRequest, Provider
from agentladder.redaction import current
from agentladder.services.agents.registry import Registry
from agentladder.services.clock import Clock, SystemClock
from agentladder.services.deliberations.agent_locks import AgentLocks
from agentladder.services.deliberations.calls import ProviderCalls
from agentladder.services.deliberations.named import named_record
from agentladder.services.deliberations.named import participants as named_participants
from agentladder.services.deliberations.rounds import RoundRunner
from agentladder.services.deliberations.routed import routed_record
from agentladder.services.deliberations.side_effects import (
    apply_judgments,
    apply_ranking,
    apply_skill,
    judged_type,
    with_backoff,
)
from agentladder.services.deliberations.unfinished import (
    abandon_all,
    failed_with_calls,
    settle_unfinished,
)
from agentladder.services.oracle.mentors import Mentors
from agentladder.services.oracle.service import CLOCK_SKEW_S, Oracle
from agentladder.services.routing.health import HealthMonitor
from agentladder.services.routing.service import RoutingService
from agentladder.services.skill.service import SkillService
from agentladder.store.base import Store
from agentladder.store.records import DeliberationDoc
from agentladder.store.retry import WriteTally

__all__ = ["SETTLING", "Orchestrator", "shown", "stored_status"]

SETTLING = "settling"
"""The stored status of a finished deliberation whose side effects are not all settled."""
CLOSE_ATTEMPTS = 3
"""Writes ``close`` tries for an interrupted deliberation's calls before leaving them to
recovery at the next start."""
BEHIND_RETRY_S = 5.0
"""The ``Retry-After`` while the side effects are behind (``max_settling``)."""

log = logging.getLogger(__name__)


class DeadlineExceeded(Exception):
    """A deliberation ran past ``orchestrator.deliberation_timeout_s``."""


class Orchestrator:
    """Runs deliberations among registered agents and ranks them afterwards."""

    def __init__(
        self,
        *,
        store: Store,
        registry: Registry,
        oracle: Oracle,
        providers: Mapping[str, Provider],
        agents: Mapping[str, AgentSettings] | None = None,
        settings: OrchestratorSettings | None = None,
        clock: Clock | None = None,
        timeout_s: float | None = None,
        new_id: Callable[[], str] = lambda: uuid.uuid4().hex,
        instance_id: str | None = None,
        skill: SkillService | None = None,
        routing: RoutingService | None = None,
        health: HealthMonitor | None = None,
    ) -> None:
        self.store = store
        self.routing = routing
        self.health = health
        self.skill = skill if skill is not None else oracle.skill
        self.registry = registry
        self.oracle = oracle
        self.providers = dict(providers)
        self.agents = dict(agents or {})
        self.settings = settings or OrchestratorSettings()
        self.clock = clock or SystemClock()
        self.timeout_s = self.settings.timeout_s if timeout_s is None else timeout_s
        self.new_id = new_id
        self.instance_id = instance_id or uuid.uuid4().hex  # its lease's holder
        self.mentors = Mentors(self.settings)
        self.finished: Counter[str] = Counter()  # status -> deliberations, for /metrics
        self.calls = ProviderCalls()  # every call to an agent, for /metrics
        self.writes = WriteTally()  # its side effects' conflicts and retries, for /metrics
        self.agent_locks = AgentLocks()  # its side effects, one deliberation per agent at once
        self._tasks: set[asyncio.Task[None]] = set()
        self._active: dict[str, DeliberationRecord] = {}
        self._runners: dict[str, RoundRunner] = {}  # of the running ones: their calls in flight
        self._marking: dict[str, asyncio.Future[None]] = {}  # stored as running, under way
        self._slots = asyncio.Semaphore(self.settings.max_running)
        self._waiting: set[str] = set()  # accepted, waiting for a slot
        # accepted by ``submit`` and not finished, counted from the moment of admission
        # (a spawned task joins ``_waiting`` only once it first runs)
        self._admitted = 0
        self._effects_queued = 0  # side effects spawned and not ended (max_settling)
        self._settling: dict[str, float] = {}  # id -> when its side effects began (monotonic)
        self._allowances: dict[str, dict[str, TaskAllowance]] = {}
        self._stopping: str | None = None  # set by ``close``: why what runs is interrupted
        self._interrupted: list[DeliberationRecord] = []

    def _now(self) -> float:
        return self.clock.now().timestamp()

    async def prepare(self, request: DeliberationRequest) -> DeliberationRecord:
        """The record of a new deliberation: who takes part; ``TooFewAgents`` otherwise, and
        ``TooManyTaskTypes`` when judging them in its task type would pass a bound."""
        record = await self._selection(request)
        try:
            await self.oracle.admit_task_type(judged_type(record.task_type), record.agents)
        except BaseException:
            self._allowances.pop(record.id, None)
            raise
        return record

    async def _selection(self, request: DeliberationRequest) -> DeliberationRecord:
        if request.select is not None:
            return await routed_record(
                self.routing, request, deliberation_id=self.new_id(),
                reachable=self.providers, created_at=self._now(), runner=self.instance_id,
            )  # fmt: skip
        record, allowances = await named_record(
            request, registry=self.registry, store=self.store, oracle=self.oracle,
            providers=self.providers, deliberation_id=self.new_id(), created_at=self._now(),
            runner=self.instance_id, health=self.health,
        )  # fmt: skip
        self._allowances[record.id] = allowances  # read once, used when it runs
        return record

    async def _save(self, record: DeliberationRecord) -> None:
        marking = self._marking.pop(record.id, None)
        if marking is not None:
            await asyncio.wait((marking,))  # stored as running first, never after this
        await self.store.put_deliberation(_doc(record))

    def _mark_running(self, record: DeliberationRecord) -> None:
        """Store the record as running, in the background (the rounds do not wait for the
        write; the record's next save waits for it): a reader of the store (``export``,
        another instance) sees it running, not queued."""

        async def mark(doc: DeliberationDoc) -> None:
            try:
                await self.store.put_deliberation(doc)
            except Exception:  # it stays stored as queued; its end is stored as usual
                log.warning("storing deliberation %s as running failed", record.id, exc_info=True)

        self._marking[record.id] = asyncio.ensure_future(mark(_doc(record)))

    async def submit(self, request: DeliberationRequest) -> DeliberationRecord:
        """Queue a deliberation and run it in the background; the queued record.

        ``Busy`` (and nothing stored) while ``max_waiting`` deliberations already wait for
        one of the ``max_running`` slots: while ``max_running + max_waiting`` accepted ones
        have not finished, counted from their acceptance, so requests arriving together
        cannot all slip in before their tasks first run."""
        self._refuse_when_behind()
        if self._admitted >= self.settings.max_running + self.settings.max_waiting:
            running, waiting = len(self._active), len(self._waiting)
            raise Busy(
                f"{self._admitted} deliberations admitted on this instance ({running} running,"
                f" {waiting} waiting for a slot, {self._admitted - running - waiting} being"
                " prepared), its most (orchestrator.max_running + max_waiting)"
            )
        self._admitted += 1
        slot = False
        try:
            record = await self.prepare(request)
            slot = await self._start_now(record)
            await self._save(record)
        except BaseException:
            self._admitted -= 1
            if slot:
                self._slots.release()
            raise
        if slot:
            self._active[record.id] = record  # running from here on, served from memory
            job = self._run_in_slot(record)
        else:
            self._waiting.add(record.id)  # until its task takes a slot
            job = self._execute(record, stored=True)
        task = self._spawn(job)
        task.add_done_callback(functools.partial(self._release_admission, record.id))
        return record

    async def _start_now(self, record: DeliberationRecord) -> bool:
        """Take a free slot for ``record`` at once, if one is free, and mark it running: its
        first write is then ``running`` (one write fewer than queued, then running). A
        semaphore that is not locked is acquired without suspending, so no other submit
        runs between the look and the take."""
        if self._slots.locked():
            return False
        await self._slots.acquire()
        record.status = DeliberationStatus.RUNNING
        record.started_at = self._now()
        return True

    def _refuse_when_behind(self) -> None:
        """``Busy`` while ``max_settling`` deliberations' side effects are not applied yet:
        the store falls behind or is away, and more work would only pile up retries."""
        if self._effects_queued >= self.settings.max_settling:
            raise Busy(
                f"the side effects of {self._effects_queued} deliberations are still being"
                " applied on this instance (the store is slow or away), its most"
                " (orchestrator.max_settling)",
                retry_after_s=BEHIND_RETRY_S,
            )

    def _spawn_effects(self, record: DeliberationRecord) -> None:
        """Apply the record's side effects in the background, counted until they end."""
        self._effects_queued += 1
        task = self._spawn(self._side_effects(record))
        task.add_done_callback(self._effects_ended)

    def _effects_ended(self, _: asyncio.Task[None]) -> None:
        self._effects_queued -= 1

    def _release_admission(self, deliberation_id: str, _: asyncio.Task[None]) -> None:
        self._admitted -= 1
        self._waiting.discard(deliberation_id)  # also when cancelled before it first ran

    async def run(self, request: DeliberationRequest) -> DeliberationRecord:
        """Run a deliberation to its result (side effects continue in the background)."""
        record = await self.prepare(request)
        await self._execute(record)  # stored when it ends
        return record

    def resume(self, record: DeliberationRecord) -> bool:
        """Apply a completed deliberation's pending side effects in the background, once.

        False when they are already being applied by this instance, or while
        ``max_settling`` deliberations' side effects are (the next recovery pass resumes it).
        """
        if record.id in self._settling or self._effects_queued >= self.settings.max_settling:
            return False
        self._spawn_effects(record)
        return True

    async def interrupt(self, record: DeliberationRecord, reason: str) -> None:
        """Mark a queued or running deliberation that no instance will finish as failed;
        its calls, made by an instance that is gone, were not recorded: its side effects
        are abandoned."""
        record.status = DeliberationStatus.FAILED
        record.error = f"interrupted: {reason}"
        record.finished_at = self._now()
        abandon_all(record, f"{record.error}; the calls it made were not recorded")
        self.finished[record.status.value] += 1
        await self._save(record)

    def running(self, deliberation_id: str) -> bool:
        """True while this instance runs the deliberation or holds it waiting for a slot."""
        return deliberation_id in self._active or deliberation_id in self._waiting

    @property
    def settling(self) -> tuple[int, float]:
        """Deliberations whose side effects are being applied now, and how long the oldest
        of them has been at it (s; 0 when none): the side effects' queue and lag."""
        started = min(self._settling.values(), default=None)
        return len(self._settling), 0.0 if started is None else time.monotonic() - started

    @property
    def load(self) -> tuple[int, int]:
        """Deliberations running and waiting for a slot on this instance now."""
        return len(self._active), len(self._waiting)

    def _spawn(self, job: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(job)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _execute(self, record: DeliberationRecord, *, stored: bool = False) -> None:
        """Wait for one of the ``max_running`` slots, then run (a record ``stored`` as
        queued is stored as running as it starts)."""
        self._waiting.add(record.id)
        try:
            await self._slots.acquire()
        except asyncio.CancelledError:
            if self._stopping is None:
                raise
            await self._stopped(record, f"{self._stopping}, before it started", None)
            return
        finally:
            self._waiting.discard(record.id)
        await self._run_in_slot(record, stored=stored)

    async def _run_in_slot(self, record: DeliberationRecord, *, stored: bool = False) -> None:
        """Run ``record`` in the slot it holds, freed at its end."""
        try:
            await self._run(record, stored=stored)
        finally:
            self._slots.release()

    async def _stopped(
        self, record: DeliberationRecord, why: str, runner: RoundRunner | None
    ) -> None:
        """``close`` interrupted ``record``: stored failed with the calls made."""
        failed_with_calls(record, f"interrupted: {why}", runner)
        record.finished_at = self._now()
        self.finished[record.status.value] += 1
        self._interrupted.append(record)
        try:
            await self._save(record)
        finally:
            self._active.pop(record.id, None)
            self._runners.pop(record.id, None)

    async def _run(self, record: DeliberationRecord, *, stored: bool = False) -> None:
        request = record.request
        if request is None:
            raise InvalidInput("request", None, "an orchestrated deliberation needs its request")
        if record.status is not DeliberationStatus.RUNNING:  # else started at submit
            record.status = DeliberationStatus.RUNNING
            record.started_at = self._now()
        self._active[record.id] = record  # served from memory while it runs
        if stored:
            self._mark_running(record)
        runner: RoundRunner | None = None
        try:
            participants = await named_participants(
                record, request, self._allowances.pop(record.id, {}), oracle=self.oracle,
                store=self.store, agents=self.agents, providers=self.providers,
            )  # fmt: skip
            runner = RoundRunner(
                timeout_s=self.timeout_s, examples=self.mentors.examples(request.task_type),
                calls=self.calls, health=self.health, max_wait_s=self.settings.max_retry_wait_s,
            )  # fmt: skip
            self._runners[record.id] = runner  # what its calls wait for, while it runs
            base = ProposeRequest(
                deliberation_id=record.id, round=1, user_query=request.user_query,
                task_type=request.task_type,
            )  # fmt: skip
            rounds = self.settings.scope_rounds.get(request.scope.value, 1)
            limit = self.settings.deliberation_timeout_s
            try:
                async with asyncio.timeout(limit):
                    for number in range(1, rounds + 1):
                        previous = record.rounds[-1] if record.rounds else None
                        record.rounds.append(
                            await runner.run_round(number, participants, base, previous)
                        )
                        record.count_costs()
            except TimeoutError:
                raise DeadlineExceeded(
                    f"the deliberation ran longer than {limit} s"
                    f" (orchestrator.deliberation_timeout_s), in round {len(record.rounds) + 1}"
                ) from None
            self._conclude(record, runner)
        except DeadlineExceeded as error:
            log.warning("deliberation %s failed: %s", record.id, error)
            failed_with_calls(record, f"deadline: {error}", runner)
        except Exception as error:
            log.exception("deliberation %s failed", record.id)
            failed_with_calls(record, f"{type(error).__name__}: {error}", runner)
        except asyncio.CancelledError:
            if self._stopping is None:
                self._active.pop(record.id, None)
                self._runners.pop(record.id, None)
                self._marking.pop(record.id, None)
                raise
            await self._stopped(
                record, f"{self._stopping}, in round {len(record.rounds) + 1}", runner
            )
            return
        record.finished_at = self._now()
        self.finished[record.status.value] += 1
        try:
            await self._save(record)
        finally:
            self._active.pop(record.id, None)
            self._runners.pop(record.id, None)
        self._spawn_effects(record)

    def _conclude(self, record: DeliberationRecord, runner: RoundRunner) -> None:
        """The rounds ran: the scores, the result, the outcomes; completed."""
        record.submissions = runner.submissions
        by_round = [{p.agent_id: p.aggregated_score for p in r.proposals} for r in record.rounds]
        scores = deliberation_scores(by_round)
        record.scores = {agent: scores.get(agent) for agent in record.agents}
        record.result = best_proposal(record.rounds[-1].proposals)
        record.outcomes = outcomes(
            record.agents, record.rounds, record.scores, self.settings.success_min_score
        )
        record.status = DeliberationStatus.COMPLETED
        self.mentors.learn(record)

    async def _side_effects(self, record: DeliberationRecord) -> None:
        """Ranking, judgments and skill evidence, each retried until the store takes it,
        with the participants' locks held; the record saved after, the locks released
        (its save touches no agent's state)."""
        self._settling[record.id] = time.monotonic()
        try:
            async with self.agent_locks.hold(record.agents):
                await self._apply_side_effects(record)
            await with_backoff(
                f"saving {record.id}",
                SideEffect(),
                lambda: self._save(record),
                kind="save",
                tally=self.writes,
            )
        finally:
            self._settling.pop(record.id, None)

    async def _apply_side_effects(self, record: DeliberationRecord) -> None:
        """The three side effects at once: each writes its own state (the stats, the
        Oracle's events, the skill evidence) and none reads another's."""
        now = int(self._now())
        if record.status is DeliberationStatus.FAILED:
            await settle_unfinished(self.store, record, now, tally=self.writes)
            return

        async def rank() -> None:
            await apply_ranking(self.store, record, now, self.writes)

        async def judge() -> None:
            await apply_judgments(self.oracle, record, self.settings.success_min_score)

        steps = [
            with_backoff(
                f"ranking of {record.id}", record.ranking, rank, kind="ranking", tally=self.writes
            ),
            with_backoff(
                f"judgments of {record.id}",
                record.judgments,
                judge,
                kind="judgments",
                tally=self.writes,
            ),
        ]
        skill = self.skill
        if skill is None:
            record.skill.state = SideEffectState.SKIPPED
        elif record.skill.state is not SideEffectState.APPLIED:

            async def observe() -> None:
                await apply_skill(skill, record)

            steps.append(
                with_backoff(
                    f"skill evidence of {record.id}",
                    record.skill,
                    observe,
                    kind="skill",
                    tally=self.writes,
                )
            )
        await asyncio.gather(*steps)

    async def report(self, external: ExternalDeliberation) -> tuple[DeliberationRecord, bool]:
        """Rank a deliberation run elsewhere, once per id; (record, duplicate)."""
        found = await self.store.get_deliberation(external.deliberation_id)
        if found is not None:
            existing = DeliberationRecord.model_validate(found.body, context=STORED)
            if existing.source != "external" or existing.rounds != reported_rounds(external):
                raise PayloadConflict(f"deliberation {external.deliberation_id}")
            return existing, True
        self._refuse_when_behind()
        now = self._now()
        at = external.observed_at
        if at is not None and at.timestamp() > now + CLOCK_SKEW_S:
            raise InvalidInput("observed_at", at.isoformat(), "is in the future")
        record = reported_record(external, now)
        record.outcomes = outcomes(
            record.agents, record.rounds, record.scores, self.settings.success_min_score
        )
        await self.oracle.admit_task_type(judged_type(record.task_type), record.agents)
        await self._save(record)
        self._spawn_effects(record)
        return record, False

    async def load_mentors(self, limit: int = 1000) -> None:
        """Rebuild the mentors' examples from the last ``limit`` stored deliberations."""
        records = await self.list(limit=limit)
        self.mentors.load(list(reversed(records)))

    async def settle(self) -> None:
        """Wait until every background deliberation and side effect has finished."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self, cause: str = "the service stopped") -> int:
        """Stop background work; how many deliberations it interrupted. Each one running
        or waiting for a slot is stored failed, ``interrupted: <cause>, in round N`` (or
        before it started), with the calls made and what those that answered cost; its
        calls are folded into the stats and its judgments and skill evidence abandoned
        (when the store fails, the next start's recovery finishes that). Side effects
        pending of completed deliberations resume from their records later."""
        self._stopping = cause
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)
        for record in [r for r in self._active.values() if r.id not in self._runners]:
            # started at submit, its task cancelled before it first ran
            with contextlib.suppress(Exception):
                await self._stopped(record, f"{cause}, before it started", None)
        interrupted, self._interrupted = self._interrupted, []
        now = int(self._now())
        for record in interrupted:
            try:
                await settle_unfinished(
                    self.store, record, now, max_attempts=CLOSE_ATTEMPTS, tally=self.writes
                )
                await self._save(record)
            except Exception:  # the store failed: recovery resumes it (stored as settling)
                log.exception("settling the interrupted deliberation %s failed", record.id)
        return len(interrupted)

    async def get(self, deliberation_id: str) -> DeliberationRecord:
        """One deliberation's record (a running one as it stands); ``NotFound`` if unknown."""
        if deliberation_id in self._active:
            record = self._active[deliberation_id].model_copy(deep=True)
            runner = self._runners.get(deliberation_id)
            if runner is not None:
                record.in_flight = runner.in_flight()
            return record
        doc = await self.store.get_deliberation(deliberation_id)
        if doc is None:
            raise NotFound("deliberation", deliberation_id)
        return shown(DeliberationRecord.model_validate(doc.body, context=STORED))

    async def list(
        self, *, limit: int = 50, offset: int = 0, agent: str | None = None
    ) -> list[DeliberationRecord]:
        """Deliberations, newest first (up to 1001: a page of 1000 and one to tell whether
        another follows); with ``agent``, those it took part in (a store query)."""
        if not 1 <= limit <= 1001:
            raise InvalidInput("limit", limit, "must be an integer from 1 to 1001")
        docs = await self.store.list_deliberations(limit=limit, offset=offset, agent=agent)
        return [shown(DeliberationRecord.model_validate(doc.body, context=STORED)) for doc in docs]


def _doc(record: DeliberationRecord) -> DeliberationDoc:
    """The record as it is stored, under its stored status."""
    return DeliberationDoc(
        id=record.id,
        status=stored_status(record),
        created_at=record.created_at,
        body=record.model_dump(mode="json", exclude={"in_flight"}),
    )


def shown(record: DeliberationRecord) -> DeliberationRecord:
    """A stored record as it is read out: its failure texts redacted again with the secrets
    known now (a record stored before redaction, or reported from elsewhere)."""
    return redacted_fields(record, current())


def stored_status(record: DeliberationRecord) -> str:
    """The status a record is stored under: ``settling`` while a finished deliberation's
    ranking, judgments or skill evidence are not yet settled (applied, skipped or
    abandoned), so that a restart finds and resumes them."""
    done = (SideEffectState.APPLIED, SideEffectState.SKIPPED, SideEffectState.ABANDONED)
    finished = (DeliberationStatus.COMPLETED, DeliberationStatus.FAILED)
    if record.status in finished and not (
        record.ranking.state in done
        and record.judgments.state in done
        and record.skill.state in done
    ):
        return SETTLING
    return record.status.value
