"""Admission and deadlines: at most ``max_running`` deliberations run at once, at most
``max_waiting`` wait for a slot (more are refused as busy, nothing stored), and a whole
deliberation ends at ``deliberation_timeout_s``."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from agentladder.config import OrchestratorSettings
from agentladder.domain.deliberation import DeliberationRequest
from agentladder.domain.deliberation_record import DeliberationStatus, SideEffectState
from agentladder.errors import Busy
from agentladder.providers.settings import SimulatedSettings
from agentladder.providers.simulated import SimulatedProvider
from agentladder.services.deliberations.recovery import recover
from agentladder.store.base import Store
from tests.services.world import world

REQUEST = DeliberationRequest(user_query="q", agent_names=["a", "b"], scope="quick")


def slow(latency_ms: float) -> dict[str, SimulatedProvider]:
    settings = SimulatedSettings(quality=7.0, latency_ms=latency_ms)
    return {name: SimulatedProvider(name, settings) for name in ("a", "b")}


def test_requests_arriving_together_are_admitted_up_to_the_limit(with_store: Any) -> None:
    """Six submits at once, max_running 1 and max_waiting 1: two are accepted and four are
    busy, although none of the accepted ones had started when the others were checked
    (each was counted from its acceptance; before, all six got in)."""

    async def body(store: Store) -> None:
        settings = OrchestratorSettings(max_running=1, max_waiting=1)
        orchestrator = await world(store, slow(50), settings=settings)
        outcomes = await asyncio.gather(
            *(orchestrator.submit(REQUEST) for _ in range(6)), return_exceptions=True
        )
        accepted = [o for o in outcomes if not isinstance(o, BaseException)]
        assert len(accepted) == 2
        assert all(isinstance(o, Busy) for o in outcomes if o not in accepted)
        assert len(await store.list_deliberations()) == 2
        await orchestrator.settle()
        assert orchestrator.load == (0, 0)
        await orchestrator.submit(REQUEST)  # everything was released
        await orchestrator.settle()

    with_store(body)


def test_one_runs_one_waits_the_next_is_busy(with_store: Any) -> None:
    """max_running 1, max_waiting 1: the second waits (stored queued, not taken for
    abandoned by recovery), the third is refused with nothing stored; both accepted ones
    complete, one after the other."""

    async def body(store: Store) -> None:
        settings = OrchestratorSettings(max_running=1, max_waiting=1)
        orchestrator = await world(store, slow(150), settings=settings)
        first = await orchestrator.submit(REQUEST)
        second = await orchestrator.submit(REQUEST)
        await asyncio.sleep(0.05)
        assert orchestrator.load == (1, 1)
        admitted = r"2 deliberations admitted on this instance \(1 running, 1 waiting"
        with pytest.raises(Busy, match=admitted):
            await orchestrator.submit(REQUEST)
        assert len(await store.list_deliberations()) == 2  # the refused one left no record
        waiting = await orchestrator.get(second.id)
        assert waiting.status is DeliberationStatus.QUEUED
        assert orchestrator.running(second.id)
        far_later = time.time() + 10 * 3600  # older than any deliberation may run
        assert (await recover(orchestrator, now=far_later)).interrupted == 0
        await orchestrator.settle()
        assert orchestrator.load == (0, 0)
        done = [await orchestrator.get(r.id) for r in (first, second)]
        assert [r.status for r in done] == [DeliberationStatus.COMPLETED] * 2
        assert done[0].finished_at is not None
        assert done[1].started_at is not None
        assert done[1].started_at >= done[0].finished_at  # one at a time
        await orchestrator.submit(REQUEST)  # a slot and the queue are free again
        await orchestrator.settle()

    with_store(body)


def test_a_deliberation_past_its_deadline_fails_and_ranks_no_one(with_store: Any) -> None:
    """Calls of 200 ms, 2 rounds (about 0.8 s), a 0.5 s deadline: failed in round 2 with a
    deadline error, after at least 0.5 s, its calls of round 2 cut (never counted); nobody
    promoted or judged: the calls of round 1 are counted in the stats (no deliberation
    is), the judgments abandoned with the reason."""

    async def body(store: Store) -> None:
        settings = OrchestratorSettings(deliberation_timeout_s=0.5)
        orchestrator = await world(store, slow(200), settings=settings)
        started = time.monotonic()
        record = await orchestrator.run(
            DeliberationRequest(user_query="q", agent_names=["a", "b"], scope="standard")
        )
        elapsed = time.monotonic() - started
        await orchestrator.settle()
        assert record.status is DeliberationStatus.FAILED
        assert record.error is not None
        assert record.error.startswith("deadline: the deliberation ran longer than 0.5 s")
        assert "in round 2" in record.error
        assert len(record.rounds) == 1
        assert elapsed >= 0.45  # not ended early; that it was cut: round 2's calls uncounted
        stored = await orchestrator.get(record.id)
        assert stored.status is DeliberationStatus.FAILED
        assert stored.ranking.state is SideEffectState.APPLIED
        assert stored.ranking.promoted == []
        assert stored.judgments.state is SideEffectState.ABANDONED
        assert stored.judgments.error is not None
        assert "did not complete" in stored.judgments.error
        stats = await store.get_stats("a")
        assert stats is not None
        assert (stats.value.rank, stats.value.deliberations_completed) == (0, 0)
        assert stats.value.tasks_completed == 2  # its proposal and evaluation of round 1 only
        assert stored.total_cost > 0  # the calls that answered were paid

    with_store(body)
