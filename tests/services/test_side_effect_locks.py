"""One instance's side effects hold their agents' locks (``AgentLocks``): deliberations
sharing agents are applied one after the other instead of racing each other's
compare-and-sets; disjoint ones together; the locks are dropped when unused."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from agentladder.services.deliberations.agent_locks import AgentLocks
from agentladder.store.base import Store
from tests.services.test_external import report
from tests.services.world import world

AGENTS = [f"agent-{n}" for n in range(6)]


class Slow:
    """Wraps a store whose stats reads give way to other tasks before they answer, as a
    remote store's round trip does (so that another commit can fall between a read and
    the commit it leads to)."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def get_many_stats(self, agent_ids: Any) -> Any:
        found = await self.inner.get_many_stats(agent_ids)
        await asyncio.sleep(0.002)
        return found


def test_reports_sharing_agents_commit_without_conflicts(with_store: Any) -> None:
    """40 reports of 3 of 6 agents at once: every ranking applied, each agent's stats count
    each of its deliberations, and none of the stats' compare-and-sets conflicted (the
    same load without the locks conflicts on most attempts); the locks are gone after."""

    async def body(store: Store) -> None:
        orchestrator = await world(Slow(store), {})
        rng = random.Random(27)
        taking: dict[str, int] = dict.fromkeys(AGENTS, 0)
        records = []
        for number in range(40):
            agents = rng.sample(AGENTS, 3)
            for agent in agents:
                taking[agent] += 1
            scores = {agent: float(rng.randint(1, 9)) for agent in agents}
            records.append((await orchestrator.report(report(f"ext-{number}", scores)))[0])
        await orchestrator.settle()
        assert all(r.ranking.state.value == "applied" for r in records)
        for agent, count in taking.items():
            stats = await store.get_stats(agent)
            assert stats is not None
            assert stats.value.deliberations_completed == count, agent
        assert orchestrator.writes.attempts["stats"] == 40
        assert orchestrator.writes.conflicts["stats"] == 0
        assert len(orchestrator.agent_locks) == 0

    with_store(body)


def test_overlapping_sets_wait_disjoint_ones_do_not() -> None:
    """{a, b} then {b, c}: the second waits for the first; {d} runs beside it; holders of
    {a, b} and {b, a} in turn never deadlock; nothing is left in the map."""

    async def main() -> None:
        locks = AgentLocks()
        order: list[str] = []
        first_in = asyncio.Event()
        release = asyncio.Event()

        async def first() -> None:
            async with locks.hold(["b", "a", "a"]):
                order.append("first in")
                first_in.set()
                await release.wait()
                order.append("first out")

        async def second() -> None:
            await first_in.wait()
            async with locks.hold(["c", "b"]):
                order.append("second in")

        async def disjoint() -> None:
            await first_in.wait()
            async with locks.hold(["d"]):
                order.append("disjoint in")
            release.set()

        await asyncio.gather(first(), second(), disjoint())
        assert order == ["first in", "disjoint in", "first out", "second in"]

        async def crossing(names: list[str]) -> None:
            for _ in range(50):
                async with locks.hold(names):
                    await asyncio.sleep(0)

        await asyncio.wait_for(asyncio.gather(crossing(["a", "b"]), crossing(["b", "a"])), 10)
        assert len(locks) == 0

    asyncio.run(main())


def test_a_waiter_cancelled_leaves_no_lock_held() -> None:
    """A holder waiting for a lock, cancelled, holds none of its agents afterwards and
    leaves no entry behind; the next holder gets them."""

    async def main() -> None:
        locks = AgentLocks()
        held = asyncio.Event()
        release = asyncio.Event()

        async def holder() -> None:
            async with locks.hold(["b"]):
                held.set()
                await release.wait()

        async def waiter() -> None:
            async with locks.hold(["a", "b"]):  # takes a, then waits for b
                pytest.fail("the waiter got b while it was held")

        first = asyncio.ensure_future(holder())
        await held.wait()
        second = asyncio.ensure_future(waiter())
        await asyncio.sleep(0.01)
        second.cancel()
        with pytest.raises(asyncio.CancelledError):
            await second
        release.set()
        await first
        assert len(locks) == 0
        async with locks.hold(["a", "b"]):
            assert len(locks) == 2

    asyncio.run(main())


def test_each_agents_holders_go_in_arrival_order() -> None:
    """300 holders of 1 to 5 of 8 agents, arriving in turn and holding for random short
    times: each agent's holders go in the order they arrived, never two at once, every
    holder ends (no deadlock), and nothing is left in the map."""

    async def main() -> None:
        locks = AgentLocks()
        rng = random.Random(31)
        names = [f"a{n}" for n in range(8)]
        arrived: dict[str, list[int]] = {name: [] for name in names}
        went: dict[str, list[int]] = {name: [] for name in names}
        holding: set[str] = set()

        async def holder(number: int, agents: list[str], pause: float) -> None:
            async with locks.hold(agents):
                assert not holding & set(agents)
                holding.update(agents)
                for agent in agents:
                    went[agent].append(number)
                await asyncio.sleep(pause)
                holding.difference_update(agents)

        tasks = []
        for number in range(300):
            agents = rng.sample(names, rng.randint(1, 5))
            for agent in agents:
                arrived[agent].append(number)
            tasks.append(asyncio.ensure_future(holder(number, agents, rng.random() / 500)))
            if rng.random() < 0.3:
                await asyncio.sleep(0)
        await asyncio.wait_for(asyncio.gather(*tasks), 30)
        assert went == arrived
        assert len(locks) == 0

    asyncio.run(main())
