"""NATS skill log: ``SkillKv.events_since`` gives the events ``events`` pages give, and
reads the few written since a point all at once (a fit's commit reads them between reading
states and writing them: ``store/nats/skillfit.py``)."""

from __future__ import annotations

import asyncio
from typing import Any

from agentladder.domain.skill.evidence import ScoreEvidence
from agentladder.services.skill.service import SkillService
from agentladder.store.nats import skills as skills_module
from agentladder.store.nats.skills import SkillKv
from agentladder.store.nats.store import NatsStore
from agentladder.store.url import open_store


async def _written(store: NatsStore, count: int, start: int = 0) -> None:
    """``count`` judgments of three agents: keys that name their agent (two publishes
    each, a state's older values removed) and keys that do not (atomic batches)."""
    skill = SkillService(store)
    for i in range(start, start + count):
        key = f"judgment:a{i % 3}:{i}" if i % 2 else f"j-{i}"
        await skill.observe(
            ScoreEvidence(key=key, at=1.0 + i, agent_id=f"a{i % 3}", task_type="t", score=i % 10)
        )


async def _paged(kv: SkillKv, after: int) -> list[Any]:
    return await kv.events(after, 100_000)


def test_events_since_equals_the_paged_events_from_any_point(nats_store_url: str) -> None:
    """From the start (more messages than ``PARALLEL_READS``: paged), from the middle and
    the end (read at once), and past the last event: the same events, in order."""

    async def main() -> None:
        store = await open_store(nats_store_url)
        assert isinstance(store, NatsStore)
        try:
            await _written(store, 40)
            kv = store._skills
            every = await _paged(kv, 0)
            assert len(every) == 40
            last = every[-1].seq
            assert last > skills_module.PARALLEL_READS  # from 0: the paged way
            for after in (0, every[9].seq, every[-12].seq, every[-12].seq + 1, last - 1, last):
                assert await kv.events_since(after) == await _paged(kv, after), after
            assert await kv.events_since(last + 1000) == []
        finally:
            await store.close()

    asyncio.run(main())


def test_the_events_written_since_a_point_are_read_at_once(nats_store_url: str) -> None:
    """Twelve events (and their states' messages) after a point: one request for the last
    event's place, then one per message, all sent before any answer came back, so that the
    time does not grow with their number as reading them one after another did."""

    async def main() -> None:
        store = await open_store(nats_store_url)
        assert isinstance(store, NatsStore)
        try:
            await _written(store, 5)
            kv = store._skills
            after = (await _paged(kv, 0))[-1].seq
            await _written(store, 12, start=5)
            plain = kv.js.get_msg
            flying, most, calls = [0], [0], [0]

            async def counted(*args: Any, **kwargs: Any) -> Any:
                calls[0] += 1
                flying[0] += 1
                most[0] = max(most[0], flying[0])
                try:
                    return await plain(*args, **kwargs)
                finally:
                    flying[0] -= 1

            kv.js.get_msg = counted  # type: ignore[method-assign]
            found = await kv.events_since(after)
            requests, together = calls[0], most[0]
            kv.js.get_msg = plain  # type: ignore[method-assign]
            assert [e.key for e in found] == [e.key for e in await _paged(kv, after)]
            assert len(found) == 12
            # the last event's place, then every message after ``after`` (12 events and
            # at least their 12 states' messages) together
            assert requests >= 1 + 24
            assert together == requests - 1
        finally:
            await store.close()

    asyncio.run(main())
