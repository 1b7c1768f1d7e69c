"""One deadline per call, its retries and waits included; what a call waits for, shown.

A provider asking for a short Retry-After then hanging: the call's wait and its retry
come out of one ``timeout_s``; a Retry-After longer than what is left, or than
``max_wait_s``, ends the call at once; while a call waits, ``in_flight`` says for what.

The rounds run on virtual time (``tests/virtual_time.py``): when each call began and was
cut is an exact loop time, whatever the machine's load.
"""

from __future__ import annotations

import asyncio

import pytest

from agentladder.domain.agents import AgentConfig
from agentladder.domain.deliberation_record import CallInFlight, RoundRecord
from agentladder.errors import ProviderError
from agentladder.providers.base import EvaluateRequest, Evaluation, Proposal, ProposeRequest
from agentladder.providers.settings import SimulatedSettings
from agentladder.providers.simulated import SimulatedProvider
from agentladder.services.deliberations.rounds import Participant, RoundRunner
from tests.services.test_routing_health import ALLOWANCE
from tests.virtual_time import now, run_virtual

RETRYING = ALLOWANCE.model_copy(update={"max_retries": 5})


class AskThenHang:
    """Answers its first call 429 with Retry-After ``wait_s``, then never answers; logs
    each call and each cancellation with the loop's time."""

    def __init__(self, wait_s: float) -> None:
        self.wait_s = wait_s
        self.calls = 0
        self.log: list[tuple[str, float]] = []

    async def _answer(self, what: str) -> None:
        self.calls += 1
        self.log.append((what, now()))
        if self.calls == 1:
            raise ProviderError("http", "answered 429", retry_after_s=self.wait_s)
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            self.log.append(("cancelled", now()))
            raise

    def said(self) -> list[str]:
        return [what for what, _ in self.log]

    def times(self) -> list[float]:
        return [at for _, at in self.log]

    async def propose(self, request: ProposeRequest) -> Proposal:
        await self._answer("propose")
        raise AssertionError("unreachable")

    async def evaluate(self, request: EvaluateRequest) -> Evaluation:
        await self._answer("evaluate")
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        """Nothing to close."""


def participants(odd: object) -> list[Participant]:
    return [
        Participant(AgentConfig(name="odd"), odd, RETRYING),  # type: ignore[arg-type]
        Participant(AgentConfig(name="a"), SimulatedProvider("a", SimulatedSettings()), RETRYING),
        Participant(AgentConfig(name="b"), SimulatedProvider("b", SimulatedSettings()), RETRYING),
    ]


BASE = ProposeRequest(deliberation_id="d", round=1, user_query="q")


def test_the_wait_and_the_retry_share_the_calls_deadline() -> None:
    """Timeout 0.5 s, a Retry-After of 0.2 s then a hang: the proposal ends at 0.5 s from
    its start (two attempts: the wait, then a retry cut at what is left), not 0.2 + 0.5;
    while it waits, ``in_flight`` says so."""
    odd = AskThenHang(0.2)
    runner = RoundRunner(timeout_s=0.5, max_wait_s=5.0)
    seen: list[CallInFlight] = []

    async def main() -> float:
        async def watch() -> None:
            while True:
                seen.extend(runner.in_flight())
                await asyncio.sleep(0.02)

        watcher = asyncio.ensure_future(watch())
        round_ = await runner.run_round(1, participants(odd), BASE, None)
        ended = now()
        watcher.cancel()
        mine = round_.proposals[0]
        assert mine.attempts == 2
        assert mine.error == "timeout: no answer within 0.5 s"
        assert mine.latency_ms == pytest.approx(0 + 300, abs=1e-3)  # the 429, then the retry
        return ended

    ended = run_virtual(main())
    # asked, waited 0.2 s, asked again and cut at 0.5 s (not 0.7); its evaluations, with no
    # Retry-After pending any more, asked at once and cut at their own deadline, 0.5 s on
    assert odd.said() == ["propose", "propose", "cancelled", *["evaluate"] * 2, *["cancelled"] * 2]
    assert odd.times() == pytest.approx([0.0, 0.2, 0.5, 0.5, 0.5, 1.0, 1.0], abs=1e-6)
    assert ended == pytest.approx(1.0, abs=1e-6)
    waiting = [c for c in seen if c.state == "waiting"]
    assert waiting
    assert {c.agent_id for c in waiting} == {"odd"}
    assert waiting[0].reason == "its provider asked to retry in 1 s (Retry-After)"  # 0.2
    assert waiting[0].text().startswith("waiting for odd (propose): its provider asked")
    assert all(c.call == "propose" for c in waiting)  # the evaluations did not wait
    calling = [c for c in seen if c.state == "calling" and c.call == "evaluate"]
    assert calling
    assert calling[0].of in ("a", "b")
    assert calling[0].text().startswith(f"calling {calling[0].agent_id} (evaluate of ")
    assert runner.in_flight() == []


def test_a_retry_after_longer_than_what_is_left_ends_the_call_at_once() -> None:
    """Timeout 0.5 s, Retry-After 0.8 s (shorter than max_wait_s): the proposal ends at once
    after its one attempt, saying what is left of the deadline; its evaluations are not
    asked."""
    odd = AskThenHang(0.8)
    runner = RoundRunner(timeout_s=0.5, max_wait_s=5.0)

    async def main() -> RoundRecord:
        round_ = await runner.run_round(1, participants(odd), BASE, None)
        assert now() == 0.0  # the whole round: no wait, no deadline reached
        return round_

    round_ = run_virtual(main())
    mine = round_.proposals[0]
    assert mine.attempts == 1
    assert mine.error is not None
    assert "(not retried: its provider asked not to be called for 1 s more (Retry-After)" in (
        mine.error
    )
    assert "s left of the call's 0.5 s deadline (orchestrator.timeout_s))" in mine.error
    skipped = [e for p in round_.proposals for e in p.evaluations if e.evaluator == "odd"]
    assert len(skipped) == 2
    assert all((e.error or "").startswith("not asked: ") for e in skipped)
    assert odd.calls == 1
    assert odd.log == [("propose", 0.0)]


def test_a_retry_after_longer_than_max_wait_ends_the_call_at_once() -> None:
    """Timeout 60 s, Retry-After 0.3 s, ``max_wait_s`` 0.1 s: not waited for."""
    odd = AskThenHang(0.3)
    runner = RoundRunner(timeout_s=60.0, max_wait_s=0.1)

    async def main() -> RoundRecord:
        round_ = await runner.run_round(1, participants(odd), BASE, None)
        assert now() == 0.0  # not waited for
        return round_

    round_ = run_virtual(main())
    mine = round_.proposals[0]
    assert mine.attempts == 1
    assert mine.error is not None
    assert "longer than a call waits for a provider (0.1 s, orchestrator.max_retry_wait_s)" in (
        mine.error
    )
    assert odd.calls == 1
