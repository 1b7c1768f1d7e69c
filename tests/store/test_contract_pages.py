"""Store contract, pages for an export: every agent's events, ledger lines and
deliberation records, read page by page from a position, each met once."""

from __future__ import annotations

from typing import Any

from agentladder.store.base import Store
from agentladder.store.records import DeliberationDoc
from tests.store.builders import award, judgment


def test_events_after_reads_every_agent_in_the_order_stored(with_store: Any) -> None:
    """Pages of two from position 0 give every agent's events once, in the order stored."""

    async def body(store: Store) -> None:
        assert await store.events_after(0, 10) == []
        order = [("a", "c1"), ("b", "c2"), ("a", "c3"), ("c", "c4"), ("b", "c5")]
        for agent, contract in order:
            await award(store, judgment(agent, contract))
        seen: list[tuple[str, str]] = []
        positions: list[int] = []
        after = 0
        while page := await store.events_after(after, 2):
            assert len(page) <= 2
            positions += [position for position, _ in page]
            seen += [(event.agent_id, event.key) for _, event in page]
            after = page[-1][0]
        assert seen == order
        assert positions == sorted(set(positions))
        assert await store.events_after(positions[-1], 10) == []

    with_store(body)


def test_ledger_after_reads_every_line_by_id(with_store: Any) -> None:
    """Pages of one line give every agent's ledger lines by id, as its own ledger holds them."""

    async def body(store: Store) -> None:
        assert await store.ledger_after(0, 10) == []
        for agent, contract in [("a", "c1"), ("b", "c2"), ("a", "c3")]:
            await award(store, judgment(agent, contract, score=9.5))
        expected = await store.ledger("a", limit=100) + await store.ledger("b", limit=100)
        expected.sort(key=lambda entry: entry.id)
        assert len(expected) >= 6  # each award pays several lines
        read = []
        after = 0
        while page := await store.ledger_after(after, 1):
            assert len(page) == 1
            read += page
            after = page[-1].id
        assert read == expected
        assert await store.ledger_after(0, 1000) == expected

    with_store(body)


def test_deliberations_after_meets_every_record_once(with_store: Any) -> None:
    """Pages of two give every record once, its latest version, at increasing positions."""

    async def body(store: Store) -> None:
        assert await store.deliberations_after(0, 10) == []
        for index, name in enumerate(["d1", "d2", "d3"]):
            await store.put_deliberation(
                DeliberationDoc(id=name, status="running", created_at=10.0 + index)
            )
        await store.put_deliberation(
            DeliberationDoc(id="d1", status="completed", created_at=10.0, body={"x": 1})
        )
        read: list[tuple[int, DeliberationDoc]] = []
        after = 0
        while page := await store.deliberations_after(after, 2):
            read += page
            after = page[-1][0]
        assert sorted(doc.id for _, doc in read) == ["d1", "d2", "d3"]
        positions = [position for position, _ in read]
        assert positions == sorted(set(positions))
        latest = {doc.id: doc for _, doc in read}["d1"]
        assert (latest.status, latest.body) == ("completed", {"x": 1})

    with_store(body)
