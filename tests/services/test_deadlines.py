"""Per-call time limits on one timer: each call's own, cancelled once, as ``asyncio.timeout``.

The calls run on virtual time (``tests/virtual_time.py``): a deadline passes at an exact
loop time, so "the late call ends on its own deadline" is a check of ``loop.time()``, and a
call due 0.02 s before its deadline is in time however loaded the machine is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

import pytest

from agentladder.domain.agents import AgentConfig
from agentladder.domain.levels import Level
from agentladder.domain.privileges import TaskAllowance
from agentladder.providers.base import EvaluateRequest, Evaluation, Proposal, ProposeRequest
from agentladder.services.deliberations.deadlines import Deadlines
from agentladder.services.deliberations.rounds import Participant, RoundRunner
from tests.services.world import simulated
from tests.virtual_time import now, run_virtual

LIMIT = 0.1


class Call:
    """A call that takes ``seconds``, counting the cancellations delivered to it (and the
    loop time of the last)."""

    def __init__(self, seconds: float, *, swallow: bool = False) -> None:
        self.seconds = seconds
        self.swallow = swallow  # answer anyway once cancelled
        self.cancellations = 0
        self.cancelled_at: float | None = None

    async def __call__(self) -> str:
        try:
            await asyncio.sleep(self.seconds)
        except asyncio.CancelledError:
            self.cancellations += 1
            self.cancelled_at = now()
            if not self.swallow:
                raise
        return "answer"


async def watched(deadlines: Deadlines, call: Awaitable[str]) -> str:
    """How the round runner awaits a call: a timeout is ``TimeoutError`` here."""
    task = deadlines.start()
    try:
        try:
            return await call
        finally:
            expired = deadlines.finish(task)
    except asyncio.CancelledError:
        if not expired:
            raise
        raise TimeoutError from None


def test_each_call_is_limited_from_its_own_start_and_cancelled_once() -> None:
    async def main() -> None:
        deadlines = Deadlines(LIMIT)
        slow, late_ok, late_slow = Call(10), Call(0.08), Call(10)

        async def later(call: Call) -> str:
            await asyncio.sleep(0.05)  # starts when the first call is half way
            return await watched(deadlines, call())

        outcomes = await asyncio.gather(
            watched(deadlines, slow()), later(late_ok), later(late_slow), return_exceptions=True
        )
        assert isinstance(outcomes[0], TimeoutError)
        assert outcomes[1] == "answer"  # ends after the first call's deadline: still in time
        assert isinstance(outcomes[2], TimeoutError)
        assert (slow.cancellations, late_ok.cancellations, late_slow.cancellations) == (1, 0, 1)
        assert slow.cancelled_at == pytest.approx(LIMIT, abs=1e-6)
        assert late_slow.cancelled_at == pytest.approx(0.05 + LIMIT, abs=1e-6)  # its own
        assert now() == pytest.approx(0.05 + LIMIT, abs=1e-6)

    run_virtual(main())


def test_a_finished_call_leaves_its_task_alone_after_the_deadline() -> None:
    async def main() -> None:
        deadlines = Deadlines(LIMIT)
        assert await watched(deadlines, Call(0)()) == "answer"
        await asyncio.sleep(2 * LIMIT)  # not cancelled by the finished call's deadline
        assert await watched(deadlines, Call(0.05)()) == "answer"
        task = asyncio.current_task()
        assert task is not None
        assert task.cancelling() == 0

    run_virtual(main())


def test_another_cancellation_is_not_a_timeout() -> None:
    async def main() -> None:
        deadlines = Deadlines(LIMIT)
        call = Call(10)
        task = asyncio.ensure_future(watched(deadlines, call()))
        await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert call.cancellations == 1
        assert call.cancelled_at == pytest.approx(0.02, abs=1e-6)  # by the cancel, not the timer
        await asyncio.sleep(LIMIT)  # its deadline passes: nothing left to cancel

    run_virtual(main())


def test_a_call_answering_despite_its_deadline_keeps_its_answer() -> None:
    """As with ``asyncio.timeout``: the cancellation withdrawn, the answer returned."""

    async def main() -> None:
        deadlines = Deadlines(LIMIT)
        call = Call(10, swallow=True)
        assert await watched(deadlines, call()) == "answer"
        assert call.cancellations == 1
        assert call.cancelled_at == pytest.approx(LIMIT, abs=1e-6)
        task = asyncio.current_task()
        assert task is not None
        assert task.cancelling() == 0

    run_virtual(main())


class Slow:
    """A provider whose every call takes ``seconds``, counting the cancellations."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.cancellations = 0

    async def _wait(self) -> None:
        try:
            await asyncio.sleep(self.seconds)
        except asyncio.CancelledError:
            self.cancellations += 1
            raise

    async def propose(self, request: ProposeRequest) -> Proposal:
        await self._wait()
        return Proposal(content="late")

    async def evaluate(self, request: EvaluateRequest) -> Evaluation:
        await self._wait()
        return Evaluation(score=5.0)

    async def aclose(self) -> None:
        """Nothing to release."""


def allowance(retries: int) -> TaskAllowance:
    return TaskAllowance(
        allowed=True, reason=None, level=Level.ROOKIE, task_type=None, complexity=None,
        max_retries=retries, can_self_correct=False, can_mentor=False,
    )  # fmt: skip


def test_a_timed_out_call_is_not_retried_past_its_deadline() -> None:
    """One deadline per call, its retries included: a try cancelled at the deadline is
    one failed submission and leaves no time for another, retries allowed or not."""

    async def main() -> None:
        slow = Slow(10)
        fast = simulated({"y": 8.0, "z": 6.0})
        participants = [
            Participant(AgentConfig(name="x"), slow, allowance(retries=2)),
            *(Participant(AgentConfig(name=n), p, allowance(0)) for n, p in fast.items()),
        ]
        runner = RoundRunner(timeout_s=0.05)
        base = ProposeRequest(deliberation_id="d", round=1, user_query="q")
        round_ = await runner.run_round(1, participants, base, None)
        took = now()
        x = round_.proposals[0]
        assert x.error == "timeout: no answer within 0.05 s"
        assert x.attempts == 1
        assert x.latency_ms == pytest.approx(50, abs=1e-3)
        assert slow.cancellations == 1 + 2  # its proposal, its 2 evaluations: one try each
        assert took == pytest.approx(2 * 0.05, abs=1e-6)  # proposing, then evaluating: one
        failed = [s for s in runner.submissions if s.agent_id == "x"]  # deadline each
        assert len(failed) == 3
        assert not any(s.ok for s in failed)
        assert [s.latency_ms for s in failed] == pytest.approx([50] * 3, abs=1e-3)

    run_virtual(main())


class OwnTimeout(Slow):
    """A provider raising ``TimeoutError`` itself, at once."""

    async def _wait(self) -> None:
        raise TimeoutError("its own")


def test_a_providers_own_timeout_error_is_recorded_as_a_timeout() -> None:
    """As with ``asyncio.timeout`` around the call: the same error text, no retry lost."""

    async def main() -> None:
        fast = simulated({"y": 8.0})
        participants = [
            Participant(AgentConfig(name="x"), OwnTimeout(0), allowance(retries=1)),
            Participant(AgentConfig(name="y"), fast["y"], allowance(0)),
        ]
        runner = RoundRunner(timeout_s=5.0)
        base = ProposeRequest(deliberation_id="d", round=1, user_query="q")
        round_ = await runner.run_round(1, participants, base, None)
        x = round_.proposals[0]
        assert x.error == "timeout: no answer within 5.0 s"
        assert x.attempts == 2

    asyncio.run(main())
