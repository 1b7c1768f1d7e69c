"""The NATS store answers the listings made all the time without reading every
deliberation record: the open records (what recovery looks for) and a page of the newest
(the dashboard's). The same answer as a filter of all the records, after any sequence of
writes (rewrites, deletes), from an instance that saw them all and from one opened
afterwards; a listing reads only what was written since the one before."""

from __future__ import annotations

import asyncio
import random

import pytest

from agentladder.services.deliberations.orchestrator import SETTLING
from agentladder.services.deliberations.recovery import UNFINISHED
from agentladder.store.base import Store
from agentladder.store.nats import records
from agentladder.store.nats.record_views import RecordViews
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


def _views_read(store: Store) -> int:
    assert isinstance(store, NatsStore)
    return store._docs.views.read


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
            first = _views_read(store)
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
            assert _views_read(store) - first == 4
        finally:
            await store.close()

    asyncio.run(main())


def test_the_newest_view_answers_as_every_record_would(nats_store_url: str) -> None:
    """A view of the 15 newest keys over 400 writes of 40 ids (rewrites keep their
    created_at; deletes): whenever it answers a page (statuses, an agent, offsets), the
    page equals the filter of every record; it answers the first pages and declines
    those past its oldest key."""

    async def main() -> None:
        rng = random.Random(43)
        store = await open_store(nats_store_url)
        assert isinstance(store, NatsStore)
        docs = store._docs
        views = RecordViews(docs._js, docs._deliberations_bucket, newest=15)
        latest: dict[str, DeliberationDoc] = {}
        answered = declined = 0
        try:
            for step in range(400):
                ident = f"d{rng.randrange(40)}"
                if ident in latest and rng.random() < 0.05:
                    await docs._deliberations.delete(ident)
                    del latest[ident]
                    continue
                created = latest[ident].created_at if ident in latest else rng.random() * 1000
                doc = DeliberationDoc(
                    id=ident,
                    status=rng.choice(STATUSES),
                    created_at=created,
                    body={"agents": rng.sample(["a", "b", "c", "d"], 2)},
                )
                await store.put_deliberation(doc)
                latest[ident] = doc
                if rng.random() < 0.3:
                    await views.refresh()
                    for _ in range(4):
                        statuses = rng.choice([None, ["completed"], ["running", "failed"]])
                        agent = rng.choice([None, "a"])
                        limit, offset = rng.randint(1, 4), rng.randint(0, 3)
                        page = views.newest(limit, offset, statuses, agent)
                        if page is None:
                            declined += 1
                            continue
                        answered += 1
                        every = [
                            i
                            for i in _expected(latest, statuses or STATUSES)
                            if agent is None or agent in latest[i].body["agents"]
                        ]
                        assert page == every[offset : offset + limit], step
            assert answered > 150  # 211 with this seed
            assert declined > 150  # 221
        finally:
            await store.close()

    asyncio.run(main())


def test_a_page_of_the_newest_reads_by_key_not_every_record(
    nats_store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """300 records: the newest pages (all, by status, by agent) equal a filter of every
    record, with the whole-bucket read made impossible after the views' first refresh."""

    async def main() -> None:
        store = await open_store(nats_store_url)
        latest: dict[str, DeliberationDoc] = {}
        try:
            for n in range(300):
                doc = DeliberationDoc(
                    id=f"r{n}",
                    status=STATUSES[n % 5],
                    created_at=float(n % 97),
                    body={"agents": ["a", "b"] if n % 3 else ["c"]},
                )
                await store.put_deliberation(doc)
                latest[doc.id] = doc
            await _listed(store, OPEN)  # the views' first refresh

            async def refused(*_: object) -> None:
                raise AssertionError("every record was read")

            monkeypatch.setattr(records, "_all", refused)
            everything = _expected(latest, STATUSES)
            page = await store.list_deliberations(limit=50, offset=20)
            assert [d.id for d in page] == everything[20:70]
            done = await store.list_deliberations(limit=10, offset=0, statuses=["completed"])
            assert [d.id for d in done] == _expected(latest, ["completed"])[:10]
            of_c = await store.list_deliberations(limit=5, offset=5, agent="c")
            assert [d.id for d in of_c] == [
                i for i in everything if i.startswith("r") and latest[i].body["agents"] == ["c"]
            ][5:10]
        finally:
            await store.close()

    asyncio.run(main())
