"""The virtual-time loop the deadline tests run on: its clock jumps to the next timer when
every task waits, and the asyncio deadlines the services use keep their meaning on it."""

from __future__ import annotations

import asyncio

import pytest

from tests.virtual_time import now, run_virtual


def test_a_sleep_moves_the_clock_by_exactly_its_length() -> None:
    async def main() -> list[float]:
        seen = [now()]
        await asyncio.sleep(3600)
        seen.append(now())
        await asyncio.gather(asyncio.sleep(0.2), asyncio.sleep(0.5))
        seen.append(now())
        return seen

    assert run_virtual(main()) == pytest.approx([0.0, 3600.0, 3600.5], abs=1e-6)


def test_asyncio_timeout_and_wait_for_end_at_their_deadline() -> None:
    async def main() -> list[float]:
        ended = []
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.5):
                await asyncio.sleep(10)
        ended.append(now())
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(asyncio.sleep(10), 0.25)
        ended.append(now())
        task = asyncio.current_task()
        assert task is not None
        assert task.cancelling() == 0  # both withdrew their cancellation (Task.uncancel)
        return ended

    assert run_virtual(main()) == pytest.approx([0.5, 0.75], abs=1e-6)


def test_each_run_starts_its_clock_at_zero() -> None:
    async def main() -> float:
        await asyncio.sleep(1)
        return now()

    assert run_virtual(main()) == run_virtual(main()) == pytest.approx(1.0, abs=1e-6)
