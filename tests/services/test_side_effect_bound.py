"""Side effects in flight are bounded (``orchestrator.max_settling``): while the store keeps
them from being applied, new deliberations and reports are refused busy, with a
Retry-After, instead of piling up retries; once it catches up they are taken again."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentladder.config import OrchestratorSettings
from agentladder.domain.deliberation_record import SideEffectState
from agentladder.errors import Busy
from agentladder.store.base import Store
from tests.services.test_external import report
from tests.services.test_orchestrator import ask
from tests.services.world import simulated, world


class Held:
    """Wraps a store whose stats writes wait until ``release`` is set."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.release = asyncio.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def commit_stats(self, updates: Any, *, marker: str | None = None) -> Any:
        await self.release.wait()
        return await self.inner.commit_stats(updates, marker=marker)


def test_new_work_waits_while_the_side_effects_are_behind(with_store: Any) -> None:
    """max_settling 2: two deliberations whose rankings the store holds; a third
    deliberation and a report are refused busy (Retry-After 5 s) and nothing of them is
    stored; a repeated report is still answered; released, new work is taken again."""

    async def body(store: Store) -> None:
        held = Held(store)
        settings = OrchestratorSettings(max_settling=2)
        orchestrator = await world(held, simulated({"a": 6.0, "b": 9.0}), settings=settings)
        first = await orchestrator.report(report("ext-1", {"a": 6.0, "b": 9.0}))
        second = await orchestrator.submit(ask("a", "b", scope="quick"))
        for _ in range(200):  # until the deliberation has run and its side effects wait
            if orchestrator.settling[0] == 2:
                break
            await asyncio.sleep(0.01)
        assert orchestrator.settling[0] == 2
        with pytest.raises(Busy, match="max_settling") as refused:
            await orchestrator.submit(ask("a", "b", scope="quick"))
        assert refused.value.retry_after_s == 5.0
        with pytest.raises(Busy):
            await orchestrator.report(report("ext-2", {"a": 6.0, "b": 9.0}))
        assert await store.get_deliberation("ext-2") is None
        again, duplicate = await orchestrator.report(report("ext-1", {"a": 6.0, "b": 9.0}))
        assert duplicate
        assert again.id == "ext-1"
        assert len(await orchestrator.list(limit=10)) == 2  # nothing of the refused stored
        held.release.set()
        await orchestrator.settle()
        assert first[0].ranking.state is SideEffectState.APPLIED
        assert orchestrator.settling == (0, 0.0)
        third = await orchestrator.submit(ask("a", "b", scope="quick"))
        await orchestrator.settle()
        for record in (second, third):
            done = await orchestrator.get(record.id)
            assert done.ranking.state is SideEffectState.APPLIED

    with_store(body)
