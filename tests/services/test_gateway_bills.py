"""A request's bill: money held before it is forwarded, settled once by its cost,
released when nothing settled it, kept for the batched write when the settle's write
fails; a stream's bill settled once whatever its end."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from datetime import UTC, datetime

import pytest

from agentladder.config import TokenSettings
from agentladder.errors import BudgetExceeded, StoreUnavailable
from agentladder.services.clock import FixedClock
from agentladder.services.gateway.bills import Bill, billed
from agentladder.services.gateway.budgets import Budgets
from agentladder.services.gateway.settings import Budget
from agentladder.store.memory import MemoryStore
from agentladder.store.spend import Hold

TOKEN = TokenSettings(
    role="client", token="t" * 16, name="team-a", budget=Budget(limit_usd=1.0, period="day")
)
FREE = TokenSettings(role="client", token="f" * 16, name="team-b")
NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
DAY, MONTH, TOTAL = ("team-a", "day-2026-12-07"), ("team-a", "month-2026-12"), ("team-a", "total")


def fifth() -> tuple[int, str]:
    """A hold of $0.20."""
    return 200_000_000, "a fifth"


class Flaky(MemoryStore):
    """A memory store whose settles fail while ``down``."""

    down = False

    async def settle_spend(self, hold: Hold, charges: Mapping[tuple[str, str], int]) -> None:
        """``StoreUnavailable`` while down."""
        if self.down:
            raise StoreUnavailable("down for the test")
        await super().settle_spend(hold, charges)


async def held(store: MemoryStore) -> int:
    """What team-a's day holds now, as a hold of nothing finds it (then released)."""
    probe = Hold("probe", DAY, 0, NOW.timestamp() + 1)
    found = await store.reserve_spend(probe, 1e6, NOW.timestamp())
    await store.release_spend(probe)
    return found.held


def test_a_bill_settles_once_and_its_hold_is_replaced_by_the_cost() -> None:
    """The first settle writes the cost to the day, month and total and drops the hold;
    a second settle and the close change nothing more."""

    async def main() -> None:
        store = MemoryStore()
        budgets = Budgets(store, [TOKEN], FixedClock(NOW))
        bill = await budgets.reserve(TOKEN, fifth)
        assert await held(store) == 200_000_000
        bill.settle(0.05)
        bill.settle(0.3)
        await bill.close()
        await bill.close()
        assert await held(store) == 0
        found = await store.get_spend([DAY, MONTH, TOTAL])
        assert found == {DAY: 50_000_000, MONTH: 50_000_000, TOTAL: 50_000_000}
        await budgets.refresh()  # this instance's figures: read back, as the others'
        state = budgets.state(TOKEN)
        assert state is not None
        assert state.spent_usd == pytest.approx(0.05)

    asyncio.run(main())


def test_a_bill_closed_unsettled_releases_its_hold() -> None:
    """A request no agent answered: its hold is released, nothing is charged."""

    async def main() -> None:
        store = MemoryStore()
        budgets = Budgets(store, [TOKEN], FixedClock(NOW))
        bills = [await budgets.reserve(TOKEN, fifth) for _ in range(5)]
        with pytest.raises(BudgetExceeded):
            await budgets.reserve(TOKEN, fifth)
        await bills[0].close()
        bills[0].settle(0.5)  # after the close: ignored
        await budgets.close()
        assert await held(store) == 4 * 200_000_000
        assert await store.get_spend([DAY]) == {}
        await budgets.reserve(TOKEN, fifth)  # fits again

    asyncio.run(main())


def test_a_hold_that_does_not_fit_is_refused_with_the_figures() -> None:
    """The refusal says what is left, what was spent and held, what this request would
    hold and why; its headers carry the figures, Retry-After until midnight."""

    async def main() -> None:
        store = MemoryStore()
        await store.add_spend({DAY: 500_000_000})
        budgets = Budgets(store, [TOKEN], FixedClock(NOW))
        await budgets.reserve(TOKEN, fifth)
        with pytest.raises(BudgetExceeded) as refused:
            await budgets.reserve(TOKEN, lambda: (400_000_000, "100 output tokens at alpha's"))
        message = str(refused.value)
        assert message.startswith(
            "client 'team-a' has $0.300000 left of its $1.000000 budget for the day (spent"
            " $0.500000, $0.200000 held by its requests in flight): this request would hold"
            " $0.400000 (100 output tokens at alpha's), which does not fit"
        )
        assert message.endswith("it resets at 2026-12-08T00:00:00Z (in 43200 s)")
        headers = refused.value.headers
        assert headers["Retry-After"] == "43200"
        assert headers["x-agentladder-budget-spent"] == "0.500000"
        assert headers["x-agentladder-budget-held"] == "0.200000"
        assert headers["x-agentladder-budget-reserved"] == "0.400000"
        assert headers["x-agentladder-budget-remaining"] == "0.300000"

    asyncio.run(main())


def test_a_settle_that_cannot_be_written_is_kept_for_the_batched_write() -> None:
    """The store fails the settle: its charges count here at once and are written by
    the next flush; the hold stays (until it expires)."""

    async def main() -> None:
        store = Flaky()
        budgets = Budgets(store, [TOKEN], FixedClock(NOW))
        bill = await budgets.reserve(TOKEN, fifth)
        store.down = True
        bill.settle(0.1)
        await bill.close()
        state = budgets.state(TOKEN)
        assert state is not None
        assert state.spent_usd == pytest.approx(0.1)
        assert await held(store) == 200_000_000
        await budgets.flush()
        assert await store.get_spend([DAY]) == {DAY: 100_000_000}

    asyncio.run(main())


def test_a_client_without_a_budget_is_charged_in_batches() -> None:
    """No hold; the settle is the batched charge, written at the next flush."""

    async def main() -> None:
        store = MemoryStore()
        budgets = Budgets(store, [TOKEN, FREE], FixedClock(NOW))
        bill = await budgets.reserve(FREE, fifth)
        assert bill.hold is None
        assert bill.headers() == {}
        bill.settle(0.25)
        await bill.close()
        free_day = ("team-b", DAY[1])
        assert await store.get_spend([free_day]) == {}
        await budgets.flush()
        assert await store.get_spend([free_day]) == {free_day: 250_000_000}

    asyncio.run(main())


async def pieces(bill: Bill | None, count: int) -> AsyncIterator[bytes]:
    """``count`` chunks; with ``bill``, settled at its end by the stream itself ($0.07)."""
    try:
        for number in range(count):
            yield f"chunk {number}".encode()
    finally:
        if bill is not None:
            bill.settle(0.07)


@pytest.mark.parametrize("own", [False, True])
def test_a_stream_left_midway_settles_once(own: bool) -> None:
    """A stream its reader leaves after two chunks settles at what was relayed ($0.03),
    or at its own record when the stream made one first ($0.07): once, never both."""

    async def main() -> None:
        store = MemoryStore()
        budgets = Budgets(store, [TOKEN], FixedClock(NOW))
        bill = await budgets.reserve(TOKEN, fifth)
        stream = billed(pieces(bill if own else None, 10), bill, lambda: 0.03)
        assert isinstance(stream, AsyncGenerator)
        assert [await anext(stream), await anext(stream)] == [b"chunk 0", b"chunk 1"]
        await stream.aclose()
        await budgets.close()
        spent = 70_000_000 if own else 30_000_000
        assert await store.get_spend([DAY]) == {DAY: spent}
        assert await held(store) == 0

    asyncio.run(main())


async def broken(count: int) -> AsyncIterator[bytes]:
    """``count`` chunks, then the provider's connection breaks."""
    for number in range(count):
        yield f"chunk {number}".encode()
    raise ConnectionError("the stream breaks here")


def test_a_broken_and_a_whole_stream_settle_once() -> None:
    """A stream that breaks after two chunks settles at what was relayed ($0.03) and
    passes its error on; a stream read whole whose own record settled it ($0.07) is not
    charged again at its end."""

    async def main() -> None:
        store = MemoryStore()
        budgets = Budgets(store, [TOKEN], FixedClock(NOW))
        bill = await budgets.reserve(TOKEN, fifth)
        with pytest.raises(ConnectionError):
            _ = [chunk async for chunk in billed(broken(2), bill, lambda: 0.03)]
        whole = await budgets.reserve(TOKEN, fifth)
        assert len([c async for c in billed(pieces(whole, 3), whole, lambda: 0.5)]) == 3
        await budgets.close()
        assert await store.get_spend([DAY]) == {DAY: 100_000_000}
        assert await held(store) == 0

    asyncio.run(main())
