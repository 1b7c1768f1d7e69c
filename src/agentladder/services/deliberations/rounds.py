"""Running the rounds of one deliberation: propose, then peer-evaluate, concurrently.

Every propose or evaluate call has a timeout and is one submission for the stats
(latency, ok or failed). A failed call is retried up to the agent's ``max_retries`` at its
level for the task type (unlimited is capped by ``max_attempts``), unless asking again
cannot help (``ProviderError.retryable`` false: a missing API key, or a status that
answers the same request the same way, such as 400 for a context too long). A failed proposal of an
agent allowed to self-correct (trusted and above) gets one more try with the error shown;
in the next round, such an agent is also shown its low score. Provider errors, timeouts and
even provider bugs are recorded as failures, never raised.

One call has one deadline, ``timeout_s`` from its start, its retries, its waits and the
self-correcting try included: an attempt is cancelled at what is left of it, and a call
never outlasts it however many retries its agent is allowed.

A provider's Retry-After is honoured here too: no call to that agent is made before the
time it asked for. A retry (or another of its calls in this deliberation, or in another
one on this instance) due earlier waits for it when the wait fits in what is left of the
call's deadline and is at most ``max_wait_s`` (``orchestrator.max_retry_wait_s``); a
longer one ends the call at once: "not asked" (or "not retried") with the reason, and no
submission for the attempt not made. The agent's health has cooled it down meanwhile
(the Retry-After opened its breaker, ``services/routing/health.py``).

The runner reads the time from its event loop only (``loop.time()``, the clock of the
deadlines): a Retry-After's end, the calls' latencies and what ``in_flight`` shows are on
that one clock, so a test running the loop on virtual time sees them all consistently.

While a round runs, ``in_flight`` tells what each call is doing: under way (for how long
so far) or waiting (for how long more, and why): the deliberation page shows it.

Each call is priced at its caller's prices (``docs/costs.md``): a proposal's ``cost`` is
its author's call, an evaluation's ``cost`` its evaluator's call. Only the call that
answered is priced: a failed or timed-out attempt reports no usage and costs nothing here.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from agentladder.domain.agents import AgentConfig
from agentladder.domain.deliberation_record import (
    CallInFlight,
    EvaluationRecord,
    ProposalRecord,
    RoundRecord,
)
from agentladder.domain.privileges import TaskAllowance
from agentladder.domain.ranking import Submission
from agentladder.domain.scoring import aggregate_peer_scores
from agentladder.providers.base import (
    EvaluateRequest,
    Evaluation,
    PeerProposal,
    Proposal,
    ProposeRequest,
    Provider,
    Usage,
)
from agentladder.redaction import scrub
from agentladder.services.deliberations.calls import ProviderCalls, error_kind
from agentladder.services.deliberations.deadlines import Deadlines
from agentladder.services.routing.health import HealthMonitor

__all__ = ["Participant", "RoundRunner"]

T = TypeVar("T")
LOW_SCORE = 5.0


@dataclass(frozen=True)
class Participant:
    """An agent taking part: how to ask it and what its level allows."""

    config: AgentConfig
    provider: Provider
    allowance: TaskAllowance

    @property
    def agent_id(self) -> str:
        """The agent's name."""
        return self.config.name


def _cost(config: AgentConfig, usage: Usage) -> float:
    price_in, price_out = config.input_price_per_mtok, config.output_price_per_mtok
    return (usage.input_tokens * price_in + usage.output_tokens * price_out) / 1_000_000


def _now() -> float:
    """The running event loop's clock, which the deadlines use (``time.monotonic()`` when no
    loop runs: no call is under way then)."""
    try:
        return asyncio.get_running_loop().time()
    except RuntimeError:
        return time.monotonic()


@dataclass
class _Flight:
    """A call under way or waiting: its agent, what, since when or until when (loop time)."""

    agent_id: str
    call: str
    of: str | None
    attempt: int = 1
    since: float = 0.0
    until: float | None = None  # waiting until then
    reason: str = ""


@dataclass
class _Outcome(Generic[T]):
    value: T | None
    error: str | None
    latency_ms: float
    attempts: int


class RoundRunner:
    """Runs rounds for one deliberation, collecting every submission."""

    def __init__(
        self, *, timeout_s: float, max_attempts: int = 10, examples: tuple[str, ...] = (),
        calls: ProviderCalls | None = None,
        health: HealthMonitor | None = None,
        max_wait_s: float | None = None,
    ) -> None:  # fmt: skip
        self.timeout_s = timeout_s
        self.max_wait_s = timeout_s if max_wait_s is None else max_wait_s  # a Retry-After
        self.health = health  # told every call's outcome (cooldowns)
        self.deadlines = Deadlines(timeout_s)  # one timer for all the calls in flight
        self.max_attempts = max_attempts
        self.examples = examples  # mentors' outputs, shown to agents that are not mentors
        self.submissions: list[Submission] = []
        self.calls = calls if calls is not None else ProviderCalls()  # for /metrics
        self.spent: dict[str, float] = {}  # what each agent's answered calls cost so far
        self._not_before: dict[str, float] = {}  # a Retry-After: no call before (loop time)
        self._flights: dict[int, _Flight] = {}  # the calls under way or waiting, by id

    def in_flight(self) -> list[CallInFlight]:
        """Each call under way or waiting now, by agent."""
        now = _now()
        out = []
        for f in self._flights.values():
            waiting = f.until is not None and f.until > now
            seconds = (f.until or now) - now if waiting else now - f.since
            shown = CallInFlight(
                agent_id=f.agent_id, call=f.call, of=f.of, attempt=f.attempt,
                state="waiting" if waiting else "calling", seconds=round(seconds, 1),
                reason=f.reason if waiting else "",
            )  # fmt: skip
            out.append(shown)
        return sorted(out, key=lambda c: (c.agent_id, c.call, c.of or ""))

    def _retry_wait_s(self, agent_id: str) -> float:
        """How long the agent's provider asked not to be called any more (0: not at all)."""
        local = self._not_before.get(agent_id, 0.0) - _now()
        shared = 0.0 if self.health is None else self.health.retry_wait_s(agent_id)
        return max(0.0, local, shared)

    async def _call(
        self, agent_id: str, what: str, call: Callable[[str | None], Awaitable[T]], tries: int,
        feedback: str | None = None, *, deadline: float | None = None, of: str | None = None,
    ) -> _Outcome[T]:  # fmt: skip
        """Up to ``tries`` attempts of ``call`` (``what``: propose or evaluate, ``of``
        whose proposal), each a timed submission and one call in the provider totals, all
        before ``deadline`` (the loop's time; default ``timeout_s`` from now)."""
        loop = asyncio.get_running_loop()
        if deadline is None:
            deadline = loop.time() + self.timeout_s
        flight = _Flight(agent_id, what, of, since=loop.time())
        key = id(flight)
        self._flights[key] = flight
        try:
            return await self._attempts(flight, call, tries, feedback, deadline)
        finally:
            del self._flights[key]

    def _refusal(self, wait: float, left: float) -> str | None:
        """Why a call is not made after a Retry-After of ``wait`` s with ``left`` s of its
        deadline to go (None: it waits)."""
        if left <= 0:
            return f"the call's {self.timeout_s:g} s deadline passed (orchestrator.timeout_s)"
        if wait <= 0:
            return None
        asked = f"its provider asked not to be called for {wait:.0f} s more (Retry-After)"
        if wait > left:
            return (
                f"{asked}, longer than the {max(left, 0.0):.1f} s left of the call's"
                f" {self.timeout_s:g} s deadline (orchestrator.timeout_s)"
            )
        if wait > self.max_wait_s:
            return (
                f"{asked}, longer than a call waits for a provider"
                f" ({self.max_wait_s:g} s, orchestrator.max_retry_wait_s)"
            )
        return None

    async def _attempts(
        self, flight: _Flight, call: Callable[[str | None], Awaitable[T]], tries: int,
        feedback: str | None, deadline: float,
    ) -> _Outcome[T]:  # fmt: skip
        agent_id, what = flight.agent_id, flight.call
        loop = asyncio.get_running_loop()
        error: str | None = None
        kind: str | None = None
        total = 0.0
        made = 0
        for attempt in range(1, tries + 1):
            wait = self._retry_wait_s(agent_id)
            refused = self._refusal(wait, deadline - loop.time())
            if refused is not None:
                said = f"not asked: {refused}"
                error = said if error is None else f"{error} (not retried: {refused})"
                return _Outcome(None, error, total, made)
            if wait > 0:
                flight.until = loop.time() + wait
                flight.reason = f"its provider asked to retry in {math.ceil(wait)} s (Retry-After)"
                await asyncio.sleep(wait)
            flight.attempt, flight.since, flight.until, flight.reason = (
                attempt,
                loop.time(),
                None,
                "",
            )
            retry_after: float | None = None
            retryable = True
            start = loop.time()
            task = self.deadlines.start(deadline)
            try:
                try:
                    value = await call(feedback)
                finally:
                    expired = self.deadlines.finish(task)
            except (asyncio.CancelledError, TimeoutError) as stop:  # a call's own: as before
                if isinstance(stop, asyncio.CancelledError) and not expired:
                    raise
                error, kind = f"timeout: no answer within {self.timeout_s} s", "timeout"
                retryable = not expired  # its deadline passed: no time is left for a retry
            except Exception as failure:  # a provider's failure, whatever it is
                error, kind = scrub(str(failure)) or type(failure).__name__, error_kind(failure)
                retry_after = getattr(failure, "retry_after_s", None)
                retryable = getattr(failure, "retryable", True) is not False
            else:
                error, kind = None, None
            made = attempt
            latency = (loop.time() - start) * 1000
            self.calls.observe(agent_id, what, latency / 1000, kind)
            total += latency
            if retry_after is not None and retry_after > 0:
                self._not_before[agent_id] = max(
                    self._not_before.get(agent_id, 0.0), loop.time() + retry_after
                )
            if self.health is not None:
                self.health.record(
                    agent_id, ok=error is None, error=error, retry_after_s=retry_after,
                    evaluation=what == "evaluate",
                )  # fmt: skip
            self.submissions.append(
                Submission(agent_id=agent_id, latency_ms=latency, ok=error is None)
            )
            if error is None:
                return _Outcome(value, None, total, attempt)
            if not retryable:
                break
        return _Outcome(None, error, total, made)

    def _spent(self, participant: Participant, usage: Usage) -> float:
        """The cost of a call that answered, at its caller's prices, added to the totals."""
        cost = _cost(participant.config, usage)
        self.calls.spend(participant.agent_id, usage.input_tokens, usage.output_tokens, cost)
        self.spent[participant.agent_id] = self.spent.get(participant.agent_id, 0.0) + cost
        return cost

    def _tries(self, participant: Participant) -> int:
        retries = participant.allowance.max_retries
        return min(self.max_attempts, 1 + (self.max_attempts if retries is None else retries))

    async def _propose(self, participant: Participant, request: ProposeRequest) -> ProposalRecord:
        async def ask(feedback: str | None) -> Proposal:
            asked = (
                request if feedback is None else request.model_copy(update={"feedback": feedback})
            )
            return await participant.provider.propose(asked)

        deadline = asyncio.get_running_loop().time() + self.timeout_s  # the try's too
        outcome = await self._call(
            participant.agent_id, "propose", ask, self._tries(participant), request.feedback,
            deadline=deadline,
        )  # fmt: skip
        corrected = False
        if outcome.value is None and participant.allowance.can_self_correct:
            retry = await self._call(
                participant.agent_id, "propose", ask, 1,
                f"Your previous attempt failed ({outcome.error}). Try again.", deadline=deadline,
            )  # fmt: skip
            outcome = _Outcome(retry.value, retry.error,
                               outcome.latency_ms + retry.latency_ms,
                               outcome.attempts + retry.attempts)  # fmt: skip
            corrected = retry.value is not None
        proposal = outcome.value
        cost = 0.0 if proposal is None else self._spent(participant, proposal.usage)
        return ProposalRecord(
            agent_id=participant.agent_id,
            mentor=participant.allowance.can_mentor,
            content=None if proposal is None else proposal.content,
            latency_ms=outcome.latency_ms,
            attempts=outcome.attempts,
            self_corrected=corrected,
            cost=cost,
            error=outcome.error,
        )

    async def _evaluate(
        self, evaluator: Participant, request: EvaluateRequest, of: str
    ) -> EvaluationRecord:
        async def ask(_: str | None) -> Evaluation:
            return await evaluator.provider.evaluate(request)

        outcome = await self._call(
            evaluator.agent_id, "evaluate", ask, self._tries(evaluator), of=of
        )
        value = outcome.value
        return EvaluationRecord(
            evaluator=evaluator.agent_id,
            score=None if value is None else value.score,
            rationale="" if value is None else value.rationale,
            latency_ms=outcome.latency_ms,
            cost=0.0 if value is None else self._spent(evaluator, value.usage),
            error=outcome.error,
        )

    async def run_round(
        self,
        number: int,
        participants: Sequence[Participant],
        base: ProposeRequest,
        previous: RoundRecord | None,
    ) -> RoundRecord:
        """One round: all propose concurrently, then all score all others concurrently."""
        shown = _shown(previous)
        requests = [
            base.model_copy(
                update={
                    "round": number,
                    "previous": shown,
                    "feedback": _feedback(p, previous),
                    "examples": () if p.allowance.can_mentor else self.examples,
                }
            )
            for p in participants
        ]
        proposals = list(await asyncio.gather(
            *(self._propose(p, r) for p, r in zip(participants, requests, strict=True))
        ))  # fmt: skip
        jobs = []
        for proposal in proposals:
            if proposal.content is None:
                continue
            request = EvaluateRequest(
                deliberation_id=base.deliberation_id, round=number, user_query=base.user_query,
                task_type=base.task_type, proposal=proposal.content,
            )  # fmt: skip
            for evaluator in participants:
                if evaluator.agent_id != proposal.agent_id:
                    jobs.append((proposal, self._evaluate(evaluator, request, proposal.agent_id)))
        results = await asyncio.gather(*(job for _, job in jobs))
        for (proposal, _), evaluation in zip(jobs, results, strict=True):
            proposal.evaluations.append(evaluation)  # its cost is the evaluator's, not the author's
        for proposal in proposals:
            scores = {e.evaluator: e.score for e in proposal.evaluations if e.score is not None}
            proposal.aggregated_score = aggregate_peer_scores(proposal.agent_id, scores)
        return RoundRecord(number=number, proposals=proposals)


def _shown(previous: RoundRecord | None) -> tuple[PeerProposal, ...]:
    """The previous round's proposals, shown to every agent so that it can improve."""
    if previous is None:
        return ()
    return tuple(
        PeerProposal(agent_id=p.agent_id, content=p.content, aggregated_score=p.aggregated_score)
        for p in previous.proposals
        if p.content is not None
    )


def _feedback(participant: Participant, previous: RoundRecord | None) -> str | None:
    """For an agent allowed to self-correct: its low score of the previous round."""
    if previous is None or not participant.allowance.can_self_correct:
        return None
    mine = next((p for p in previous.proposals if p.agent_id == participant.agent_id), None)
    if mine is None or mine.aggregated_score is None or mine.aggregated_score >= LOW_SCORE:
        return None
    return f"Your previous proposal scored {mine.aggregated_score:.1f}/10. Improve it."
