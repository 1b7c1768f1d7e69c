"""The budgets' writes: charges kept in memory until written, kept again when the store
is unavailable, read back with what other instances wrote."""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping
from datetime import UTC, datetime

import pytest

from agentladder.config import TokenSettings
from agentladder.errors import StoreUnavailable
from agentladder.services.clock import FixedClock
from agentladder.services.gateway.budgets import Budgets
from agentladder.services.gateway.settings import Budget
from agentladder.store.memory import MemoryStore

TOKEN = TokenSettings(
    role="client", token="t" * 16, name="team-a", budget=Budget(limit_usd=1.0, period="day")
)
NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
DAY = ("team-a", "day-2026-12-05")


class Flaky(MemoryStore):
    """A memory store whose writes fail while ``down``."""

    down = False

    async def add_spend(self, charges: Mapping[tuple[str, str], int]) -> None:
        """``StoreUnavailable`` while down."""
        if self.down:
            raise StoreUnavailable("down for the test")
        await super().add_spend(charges)

    async def get_spend(self, keys: Collection[tuple[str, str]]) -> dict[tuple[str, str], int]:
        """``StoreUnavailable`` while down."""
        if self.down:
            raise StoreUnavailable("down for the test")
        return await super().get_spend(keys)


def test_charges_are_kept_until_a_write_succeeds() -> None:
    """A charge counts at once; a flush while the store is down keeps it (counted, not
    lost); the next flush writes it once, with the day, the month and the total."""

    async def main() -> None:
        store = Flaky()
        budgets = Budgets(store, [TOKEN], FixedClock(NOW))
        budgets.charge(TOKEN, 0.4)
        state = budgets.state(TOKEN)
        assert state is not None
        assert state.spent_usd == pytest.approx(0.4)
        store.down = True
        with pytest.raises(StoreUnavailable):
            await budgets.flush()
        state = budgets.state(TOKEN)
        assert state is not None
        assert state.spent_usd == pytest.approx(0.4)
        store.down = False
        await budgets.flush()
        await budgets.flush()
        found = await store.get_spend([DAY, ("team-a", "month-2026-12"), ("team-a", "total")])
        assert set(found.values()) == {400_000_000}

    asyncio.run(main())


def test_a_flush_reads_what_other_instances_wrote() -> None:
    """Another instance's charge in the store is counted after the next flush."""

    async def main() -> None:
        store = MemoryStore()
        budgets = Budgets(store, [TOKEN], FixedClock(NOW))
        budgets.charge(TOKEN, 0.5)
        await store.add_spend({DAY: 600_000_000})  # the other instance
        state = budgets.state(TOKEN)
        assert state is not None
        assert not state.over
        await budgets.flush()
        state = budgets.state(TOKEN)
        assert state is not None
        assert state.spent_usd == pytest.approx(1.1)
        assert state.over

    asyncio.run(main())
