"""Store contract, the holds of budgeted clients' requests: granted only when they fit
the limit with the spend and the other holds, atomically also across two connections;
settled (the cost added, the hold dropped), released, or expired."""

from __future__ import annotations

import asyncio
from typing import Any

from agentladder.store.base import Store
from agentladder.store.spend import Hold, Reserved
from agentladder.store.url import open_store

DAY = ("team-a", "day-2026-12-07")
NOW = 1_000_000.0
FIFTH = 200_000_000
"""A fifth of a $1.00 limit, in nano-dollars."""


def hold(name: str, nano: int = FIFTH, expires_at: float = NOW + 900) -> Hold:
    """A hold on team-a's day."""
    return Hold(name, DAY, nano, expires_at)


def test_holds_fit_the_limit_then_settle_or_release(with_store: Any) -> None:
    """Five fifths of $1 are granted, the sixth is refused with the figures and leaves
    nothing; a settle adds the cost to every key given and drops its hold (a sixth then
    fits what it freed); a release drops a hold; a spent limit is refused as spent."""

    async def body(store: Store) -> None:
        granted = [await store.reserve_spend(hold(f"h{i}"), 1.0, NOW) for i in range(5)]
        assert granted == [Reserved(None, 0, FIFTH * i) for i in range(5)]
        assert await store.reserve_spend(hold("h5"), 1.0, NOW) == Reserved(
            "does_not_fit", 0, 5 * FIFTH
        )
        month = ("team-a", "month-2026-12")
        await store.settle_spend(hold("h0"), {DAY: 50_000_000, month: 50_000_000})
        assert await store.get_spend([DAY, month]) == {DAY: 50_000_000, month: 50_000_000}
        await store.settle_spend(hold("h0"), {})  # a hold gone: nothing more happens
        assert await store.reserve_spend(hold("h6", 150_000_000), 1.0, NOW) == Reserved(
            None, 50_000_000, 4 * FIFTH
        )
        await store.release_spend(hold("h1"))
        await store.release_spend(hold("h1"))
        assert await store.reserve_spend(hold("h7"), 1.0, NOW) == Reserved(
            None, 50_000_000, 3 * FIFTH + 150_000_000
        )
        await store.add_spend({DAY: 950_000_000})
        refused = await store.reserve_spend(hold("h8", 0), 1.0, NOW)
        assert refused.refused == "spent"
        assert refused.spent == 1_000_000_000

    with_store(body)


def test_an_expired_hold_counts_no_more(with_store: Any) -> None:
    """A hold whose process never settled it counts until its expiry, then its money is
    free again; holds of another client or period are apart."""

    async def body(store: Store) -> None:
        assert (
            await store.reserve_spend(hold("old", 900_000_000, NOW + 10), 1.0, NOW)
        ).refused is None
        other = Hold("other", ("team-b", DAY[1]), 900_000_000, NOW + 900)
        assert (await store.reserve_spend(other, 1.0, NOW)).refused is None
        assert (await store.reserve_spend(hold("new"), 1.0, NOW + 9)).refused == "does_not_fit"
        assert await store.reserve_spend(hold("new"), 1.0, NOW + 10) == Reserved(None, 0, 0)

    with_store(body)


def test_fifty_holds_at_once_from_two_connections_stay_within_the_limit(store_url: str) -> None:
    """Two stores on the same data (two instances) ask 25 holds of a fifth each at the
    same time: exactly five are granted, each seeing the others it came after."""

    async def main() -> None:
        first = await open_store(store_url)
        second = first if store_url == "memory://" else await open_store(store_url)
        try:
            asked = [
                store.reserve_spend(hold(f"{n}-{i}"), 1.0, NOW)
                for n, store in enumerate((first, second)) for i in range(25)
            ]  # fmt: skip
            found = await asyncio.gather(*asked)
            granted = [r for r in found if r.refused is None]
            assert len(granted) == 5
            assert sorted(r.held for r in granted) == [FIFTH * i for i in range(5)]
            assert all(r.refused == "does_not_fit" for r in found if r.refused is not None)
        finally:
            await first.close()
            if second is not first:
                await second.close()

    asyncio.run(main())
