"""Recovery after a stop: acknowledged deliberations are ranked and judged, once."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from agentladder.config import AgentSettings, OrchestratorSettings, Settings
from agentladder.domain.deliberation import DeliberationRequest
from agentladder.domain.deliberation_record import (
    DeliberationRecord,
    DeliberationStatus,
    SideEffectState,
)
from agentladder.providers.settings import SimulatedSettings
from agentladder.services.clock import FixedClock
from agentladder.services.container import build_services
from agentladder.services.deliberations.orchestrator import SETTLING
from agentladder.services.deliberations.recovery import Recovered, longest_run_s, recover
from agentladder.store.base import Store
from agentladder.store.records import DeliberationDoc
from tests.services.test_external import report
from tests.services.world import world


def test_a_report_left_unranked_by_a_stop_is_ranked_once_after(with_store: Any) -> None:
    """Stopped before its side effects ran, a reported deliberation is resumed by the next
    instance; a second recovery pass finds nothing more to do."""

    async def body(store: Store) -> None:
        first = await world(store, {})
        await first.report(report("ext-1", {"a": 7.0, "b": 9.0}))
        await first.close()  # stopped before the ranking ran
        stored = await store.get_deliberation("ext-1")
        assert stored is not None
        assert stored.status == SETTLING
        assert await store.get_stats("b") is None

        second = await world(store, {})
        assert (await recover(second, now=0.0)).resumed == 1
        await second.settle()
        stored = await store.get_deliberation("ext-1")
        assert stored is not None
        assert stored.status == "completed"
        record = DeliberationRecord.model_validate(stored.body)
        assert record.ranking.state is record.judgments.state is SideEffectState.APPLIED
        b = await store.get_stats("b")
        assert b is not None
        assert (b.value.rank, b.value.tasks_completed) == (1, 1)
        profile = await store.get_profile("a")
        assert profile is not None
        assert profile.value.stats.total_tasks == 1
        assert await recover(second, now=0.0) == Recovered()

    with_store(body)


def test_resuming_what_was_already_applied_counts_it_once(with_store: Any) -> None:
    """Ranked and judged, but stopped before the record said so: resumed, counted once."""

    async def body(store: Store) -> None:
        first = await world(store, {})
        await first.report(report("ext-2", {"a": 7.0, "b": 9.0}))
        await first.settle()
        doc = await store.get_deliberation("ext-2")
        assert doc is not None
        body = dict(doc.body, ranking={"state": "pending"}, judgments={"state": "pending"})
        await store.put_deliberation(doc.model_copy(update={"status": SETTLING, "body": body}))

        second = await world(store, {})
        assert (await recover(second, now=0.0)).resumed == 1
        await second.settle()
        b = await store.get_stats("b")
        assert b is not None
        assert (b.value.rank, b.value.tasks_completed) == (1, 1)
        profile = await store.get_profile("b")
        assert profile is not None
        assert profile.value.stats.total_tasks == 1

    with_store(body)


def test_abandoned_deliberations_fail_only_after_the_longest_run(with_store: Any) -> None:
    """Queued or running with no instance left to run it: failed once it is older than the
    longest a deliberation can run; younger ones are left alone."""

    async def body(store: Store) -> None:
        clock = FixedClock()
        orchestrator = await world(store, {}, clock=clock)
        now = clock.now().timestamp()
        request = DeliberationRequest(user_query="q", agent_names=["a", "b"])
        for name, age in (("old", longest_run_s(orchestrator) + 120.0), ("young", 5.0)):
            record = DeliberationRecord(
                id=name, request=request, agents=["a", "b"], created_at=now - age,
                status=DeliberationStatus.RUNNING, started_at=now - age,
            )  # fmt: skip
            doc = DeliberationDoc(
                id=name, status="running", created_at=now - age, body=record.model_dump(mode="json")
            )
            await store.put_deliberation(doc)
        assert (await recover(orchestrator, now=now)).interrupted == 1
        old = await orchestrator.get("old")
        assert old.status is DeliberationStatus.FAILED
        assert old.error is not None
        assert old.error.startswith("interrupted")
        assert (await orchestrator.get("young")).status is DeliberationStatus.RUNNING
        assert orchestrator.finished["failed"] == 1

    with_store(body)


def test_a_deliberation_whose_instance_lease_ran_out_fails_at_once(with_store: Any) -> None:
    """Running for a few seconds only: failed at once when its instance's lease has run out
    (or was dropped), its side effects abandoned (the calls were not recorded), left alone
    while the lease is live or when this instance runs it."""

    async def body(store: Store) -> None:
        clock = FixedClock()
        orchestrator = await world(store, {}, clock=clock)
        now = clock.now().timestamp()
        await store.renew_lease("alive", now + 20.0)
        await store.renew_lease("expired", now - 1.0)
        await store.renew_lease("dropped", now + 20.0)
        await store.drop_lease("dropped")
        request = DeliberationRequest(user_query="q", agent_names=["a", "b"])
        runners = {
            "of-alive": "alive", "of-expired": "expired", "of-dropped": "dropped",
            "of-unknown": "never-leased", "of-this": orchestrator.instance_id, "of-none": None,
        }  # fmt: skip
        for name, runner in runners.items():
            record = DeliberationRecord(
                id=name, request=request, agents=["a", "b"], created_at=now - 5.0,
                status=DeliberationStatus.RUNNING, started_at=now - 5.0, runner=runner,
            )  # fmt: skip
            doc = DeliberationDoc(
                id=name, status="running", created_at=now - 5, body=record.model_dump(mode="json")
            )
            await store.put_deliberation(doc)
        assert (await recover(orchestrator, now=now)).interrupted == 3
        for name, runner in runners.items():
            got = await orchestrator.get(name)
            if name in ("of-expired", "of-dropped", "of-unknown"):
                assert got.status is DeliberationStatus.FAILED, name
                assert got.error == (
                    f"interrupted: instance {runner} stopped before finishing it"
                    " (its lease ran out)"
                )
                # its calls went with the instance: nothing pending for good
                for effect in (got.ranking, got.judgments, got.skill):
                    assert effect.state is SideEffectState.ABANDONED, name
                    assert effect.error is not None
                    assert "not recorded" in effect.error
            else:
                assert got.status is DeliberationStatus.RUNNING, name
        assert (await recover(orchestrator, now=now)).interrupted == 0  # once

    with_store(body)


@pytest.fixture(params=["sqlite", "nats"])
def shared_store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store two instances can share, one after the other (not the in-memory one)."""
    if request.param == "nats":
        return str(request.getfixturevalue("nats_store_url"))
    return f"sqlite:///{tmp_path / 'shared.db'}"


def test_a_stopped_instance_interrupts_what_it_ran_and_leaves_nothing_pending(
    shared_store_url: str,
) -> None:
    """build_services takes the instance's lease and names it as each deliberation's runner.
    An instance stopped mid-deliberation (``close``) stores it failed itself, "interrupted:"
    with the cause and the round, its side effects abandoned (no call answered); it drops
    its lease, and the next instance's first pass finds nothing left to interrupt."""
    slow = SimulatedSettings(latency_ms=60_000)
    settings = Settings(
        agents=[AgentSettings(name=name, backend=slow) for name in ("a", "b")],
        orchestrator=OrchestratorSettings(timeout_s=120.0),
    )

    async def body() -> None:
        first = await build_services(settings, store_url=shared_store_url)
        holder = first.orchestrator.instance_id
        try:
            assert holder in await first.store.live_leases(time.time())
            record = await first.orchestrator.submit(
                DeliberationRequest(user_query="q", agent_names=["a", "b"])
            )
            assert record.runner == holder
            await asyncio.sleep(0.05)  # it runs: the agents take a minute
        finally:
            assert await first.close("the service was stopped (SIGINT)") == 1
        second = await build_services(settings, store_url=shared_store_url)
        try:
            live = await second.store.live_leases(time.time())
            assert holder not in live
            assert second.orchestrator.instance_id in live
            recovered = await recover(second.orchestrator, now=time.time())
            assert recovered.interrupted == 0
            left = await second.orchestrator.get(record.id)
            assert left.status is DeliberationStatus.FAILED
            assert left.error == "interrupted: the service was stopped (SIGINT), in round 1"
            states = {left.ranking.state, left.judgments.state, left.skill.state}
            assert states == {SideEffectState.ABANDONED}
        finally:
            await second.close()

    asyncio.run(body())
