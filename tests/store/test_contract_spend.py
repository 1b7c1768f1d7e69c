"""Store contract, the gateway clients' spend: increments per (client, period key), kept
exactly, shared by two connections, none lost when they add at once."""

from __future__ import annotations

import asyncio
from typing import Any

from agentladder.store.base import Store
from agentladder.store.url import open_store


def test_spend_adds_per_key_and_reads_what_exists(with_store: Any) -> None:
    """Charges add up per key, keys stay apart, absent keys are left out of a read."""

    async def body(store: Store) -> None:
        day, month = ("team-a", "day-2026-12-05"), ("team-a", "month-2026-12")
        assert await store.get_spend([day, month]) == {}
        await store.add_spend({day: 1_500, month: 1_500})
        await store.add_spend({day: 2_000_000_000})
        await store.add_spend({})
        other = ("team.b", "total")  # a name with a dot is a key of its own
        await store.add_spend({other: 7})
        found = await store.get_spend([day, month, other, ("team-a", "total")])
        assert found == {day: 2_000_001_500, month: 1_500, other: 7}

    with_store(body)


def test_two_connections_adding_at_once_lose_nothing(store_url: str) -> None:
    """Two stores on the same data (two instances) add 40 charges each to the same key at
    the same time: the key holds all 80, and each sees the other's."""

    async def main() -> None:
        first = await open_store(store_url)
        second = first if store_url == "memory://" else await open_store(store_url)
        key = ("team-a", "total")
        try:
            await asyncio.gather(
                *(store.add_spend({key: 3}) for store in (first, second) for _ in range(40))
            )
            assert await first.get_spend([key]) == {key: 240}
            assert await second.get_spend([key]) == {key: 240}
        finally:
            await first.close()
            if second is not first:
                await second.close()

    asyncio.run(main())
