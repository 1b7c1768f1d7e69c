"""The NATS store finds the open deliberation records (what recovery looks for) without
reading every record: the same answer as a filter of all of them, after any sequence of
writes, from an instance that saw them all and from one opened afterwards; and a call
reads only what was written since the one before."""

from __future__ import annotations

import asyncio
import random

from agentladder.services.deliberations.orchestrator import SETTLING
from agentladder.services.deliberations.recovery import UNFINISHED
from agentladder.store.base import Store
from agentladder.store.nats.store import NatsStore
from agentladder.store.records import OPEN_STATUSES, DeliberationDoc
from agentladder.store.url import open_store

STATUSES = ["queued", "running", "settling", "completed", "failed"]
OPEN = sorted(OPEN_STATUSES)


def _expected(latest: dict[str, DeliberationDoc], statuses: list[str]) -> list[str]:
    docs = [d for d in latest.values() if d.status in statuses]
    return [d.id for d in sorted(docs, key=lambda d: (-d.created_at, d.id))]


async def _listed(store: Store, statuses: list[str], agent: str | None = None) -> list[str]:
    docs = await store.list_deliberations(limit=10_000, offset=0, statuses=statuses, agent=agent)
    return [d.id for d in docs]


def _open_records(store: Store) -> int:
    assert isinstance(store, NatsStore)
    return store._docs.open.read


def test_recovery_looks_for_the_open_statuses() -> None:
    """What recovery asks for is what the store keeps apart (else it reads everything)."""
    assert {SETTLING, *UNFINISHED} == OPEN_STATUSES


def test_open_records_equal_a_filter_of_every_record(nats_store_url: str) -> None:
    """600 writes of 80 ids (new, rewritten, each status), listings of open statuses (all,
    one, two; an agent's) between them: each equals the filter of the latest records,
    on the instance that wrote and on one opened after the writes."""

    async def main() -> None:
        rng = random.Random(41)
        store = await open_store(nats_store_url)
        latest: dict[str, DeliberationDoc] = {}
        try:
            for step in range(600):
                ident = f"d{rng.randrange(80)}"
                created = latest[ident].created_at if ident in latest else float(step)
                agents = rng.sample(["a", "b", "c", "d"], 2)
                doc = DeliberationDoc(
                    id=ident,
                    status=rng.choice(STATUSES),
                    created_at=created,
                    body={"agents": agents, "step": step},
                )
                await store.put_deliberation(doc)
                latest[ident] = doc
                if rng.random() < 0.1:
                    wanted = rng.choice([OPEN, ["settling"], ["queued", "running"]])
                    assert await _listed(store, wanted) == _expected(latest, wanted), step
                    by_a = [i for i in _expected(latest, wanted) if "a" in latest[i].body["agents"]]
                    assert await _listed(store, wanted, "a") == by_a
            assert await _listed(store, OPEN) == _expected(latest, OPEN)
            later = await open_store(nats_store_url)
            try:
                assert await _listed(later, OPEN) == _expected(latest, OPEN)
                assert await _listed(later, ["completed"]) == _expected(latest, ["completed"])
            finally:
                await later.close()
        finally:
            await store.close()

    asyncio.run(main())


def test_a_listing_reads_what_was_written_since_the_last(nats_store_url: str) -> None:
    """500 done records and 3 open ones: the first listing reads the bucket once; after
    4 more writes (one of them closing an open record) the next reads those 4 only."""

    async def main() -> None:
        store = await open_store(nats_store_url)
        try:
            for n in range(500):
                await store.put_deliberation(
                    DeliberationDoc(id=f"done{n}", status="completed", created_at=n)
                )
            for n in range(3):
                await store.put_deliberation(
                    DeliberationDoc(id=f"open{n}", status="running", created_at=1000 + n)
                )
            assert await _listed(store, OPEN) == ["open2", "open1", "open0"]
            first = _open_records(store)
            assert first == 503
            await store.put_deliberation(
                DeliberationDoc(id="open1", status="completed", created_at=1001)
            )
            await store.put_deliberation(
                DeliberationDoc(id="open3", status="settling", created_at=1003)
            )
            await store.put_deliberation(
                DeliberationDoc(id="done501", status="failed", created_at=501)
            )
            await store.put_deliberation(
                DeliberationDoc(id="open0", status="settling", created_at=1000)
            )
            assert await _listed(store, OPEN) == ["open3", "open2", "open0"]
            assert _open_records(store) - first == 4
        finally:
            await store.close()

    asyncio.run(main())
