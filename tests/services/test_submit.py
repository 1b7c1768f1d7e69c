"""``submit``: acknowledged once the record is stored, and nothing before that.

A deliberation that finds one of the ``max_running`` slots free is stored once as running
before ``submit`` returns; one that must wait is stored as queued, then as running as it
starts (in the background); the final record after them. When that first write fails,
``submit`` raises its error and nothing runs: no agent is asked, nothing is stored,
counted or ranked. (Overlapping that write with the rounds was tried
and dropped: slower in ``bench_orchestrator``, see docs/benchmarks.md.)
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentladder.config import OrchestratorSettings
from agentladder.domain.deliberation import DeliberationRequest
from agentladder.domain.deliberation_record import DeliberationStatus
from agentladder.domain.skill.rules import SkillRules
from agentladder.errors import StoreUnavailable
from agentladder.exporting.items import Kind, items
from agentladder.providers.base import EvaluateRequest, Evaluation, Proposal, ProposeRequest
from agentladder.store.base import Store
from agentladder.store.records import DeliberationDoc
from tests.services.world import simulated, world

AGENTS = {"a": 6.0, "b": 9.0, "c": 7.0}


def standard() -> DeliberationRequest:
    return DeliberationRequest(user_query="q", agent_names=list(AGENTS), scope="standard")


class SlowQueued:
    """Wraps a store: the first deliberation write waits ``delay_s`` (0: no wait at all),
    then stores or fails."""

    def __init__(self, inner: Store, delay_s: float, *, fail: bool = False) -> None:
        self.inner = inner
        self.delay_s = delay_s
        self.fail = fail
        self.written: list[str] = []  # the statuses stored, in order

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def put_deliberation(self, doc: DeliberationDoc) -> None:
        first = not self.written
        self.written.append(doc.status)
        if first and self.delay_s:
            await asyncio.sleep(self.delay_s)
        if first and self.fail:
            raise StoreUnavailable("injected outage")
        await self.inner.put_deliberation(doc)


class Counting:
    """A provider recording the rounds it is asked in, each call taking ``delay_s``."""

    def __init__(self, inner: Any, delay_s: float) -> None:
        self.inner = inner
        self.delay_s = delay_s
        self.rounds: set[int] = set()

    async def propose(self, request: ProposeRequest) -> Proposal:
        self.rounds.add(request.round)
        await asyncio.sleep(self.delay_s)
        proposal: Proposal = await self.inner.propose(request)
        return proposal

    async def evaluate(self, request: EvaluateRequest) -> Evaluation:
        self.rounds.add(request.round)
        await asyncio.sleep(self.delay_s)
        evaluation: Evaluation = await self.inner.evaluate(request)
        return evaluation

    async def aclose(self) -> None:
        await self.inner.aclose()


def test_submit_returns_the_running_record_once_stored_and_stores_the_end_after_it(
    with_store: Any,
) -> None:
    """A slot is free: a slow first write stores it running, the end last; no queued
    write (one write fewer for every deliberation that does not wait)."""

    async def body(store: Store) -> None:
        slow = SlowQueued(store, delay_s=0.2)
        orchestrator = await world(slow, simulated(AGENTS))
        started = await orchestrator.submit(standard())
        assert started.status is DeliberationStatus.RUNNING
        assert started.started_at is not None
        found = await store.get_deliberation(started.id)
        assert found is not None  # acknowledged: stored (it may have ended since)
        await orchestrator.settle()
        assert slow.written[:2] == ["running", "settling"]  # completed, side effects pending
        assert "queued" not in slow.written
        stored = await orchestrator.get(started.id)
        assert stored.status is DeliberationStatus.COMPLETED
        assert stored.started_at == started.started_at
        assert len(stored.rounds) == 2
        assert orchestrator.finished == {"completed": 1}

    with_store(body)


def test_a_deliberation_waiting_for_a_slot_is_stored_queued_then_running(
    with_store: Any,
) -> None:
    """One slot, two deliberations: the second is stored queued, running as it takes the
    slot the first freed, then its end."""

    async def body(store: Store) -> None:
        recording = SlowQueued(store, delay_s=0.0)
        providers = {
            name: Counting(provider, delay_s=0.05) for name, provider in simulated(AGENTS).items()
        }
        settings = OrchestratorSettings(max_running=1)
        orchestrator = await world(recording, providers, settings=settings)
        first = await orchestrator.submit(standard())
        second = await orchestrator.submit(standard())
        assert (first.status, second.status) == (
            DeliberationStatus.RUNNING, DeliberationStatus.QUEUED,
        )  # fmt: skip
        found = await store.get_deliberation(second.id)
        assert found is not None
        assert found.status == "queued"
        await orchestrator.settle()
        assert recording.written[:2] == ["running", "queued"]
        assert recording.written.count("running") == 2
        assert recording.written.index("running", 1) > recording.written.index("settling")
        for record in (first, second):
            ended = await orchestrator.get(record.id)
            assert ended.status is DeliberationStatus.COMPLETED
        assert orchestrator.finished == {"completed": 2}

    with_store(body)


@pytest.mark.parametrize("delay_s", [0.0, 0.05])
def test_a_failing_queued_write_fails_submit_and_runs_nothing(
    with_store: Any, delay_s: float
) -> None:
    """The error; no agent asked, nothing stored, counted, learned or ranked."""

    async def body(store: Store) -> None:
        failing = SlowQueued(store, delay_s=delay_s, fail=True)
        providers = {
            name: Counting(provider, delay_s=0.1) for name, provider in simulated(AGENTS).items()
        }
        orchestrator = await world(failing, providers)
        orchestrator.new_id = lambda: "d1"
        with pytest.raises(StoreUnavailable, match="injected outage"):
            await orchestrator.submit(standard())
        await orchestrator.settle()
        assert failing.written == ["running"]
        assert await store.get_deliberation("d1") is None
        assert not orchestrator.running("d1")
        assert orchestrator.finished == {}
        assert await store.get_many_stats(list(AGENTS)) == {}
        assert all(provider.rounds == set() for provider in providers.values())
        assert orchestrator.mentors.examples(None) == ()

    with_store(body)


def test_a_running_deliberation_is_stored_and_exported_as_running(with_store: Any) -> None:
    """Once it starts, a reader of the store (``export deliberations``) sees it running,
    with its start time, not queued; its end is stored after."""

    async def body(store: Store) -> None:
        providers = {
            name: Counting(provider, delay_s=0.2) for name, provider in simulated(AGENTS).items()
        }
        orchestrator = await world(store, providers)
        queued = await orchestrator.submit(standard())
        for _ in range(100):
            found = await store.get_deliberation(queued.id)
            if found is not None and found.status == "running":
                break
            await asyncio.sleep(0.01)
        exported = [
            fields async for fields, _ in items(store, Kind.DELIBERATIONS, None,
                                                rules=SkillRules(), now=0.0)
        ]  # fmt: skip
        assert [(e["id"], e["status"]) for e in exported] == [(queued.id, "running")]
        assert exported[0]["started_at"] is not None
        assert orchestrator.running(queued.id)
        await orchestrator.settle()
        ended = await store.get_deliberation(queued.id)
        assert ended is not None
        assert ended.status == "completed"

    with_store(body)
