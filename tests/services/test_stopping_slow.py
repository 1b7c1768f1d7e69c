"""A slow step of a stop says where the loop's tasks wait, so that a stop the watchdog
ends (``api/server.py``: it then writes the threads' stacks, which show the event loop
and nothing of its tasks) has said what it was waiting for."""

from __future__ import annotations

import asyncio

import pytest

from agentladder.services.container import stopping


async def _committing(done: asyncio.Event) -> None:
    await done.wait()


async def _background(done: asyncio.Event) -> None:
    await _committing(done)


def test_a_slow_step_names_the_tasks_and_where_they_wait(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def run() -> None:
        done = asyncio.Event()
        task = asyncio.ensure_future(_background(done))
        async with stopping("the background work", slow_s=0.05):
            await asyncio.sleep(0.2)
            done.set()
            await task

    with caplog.at_level("WARNING", logger="agentladder.services.container"):
        asyncio.run(run())
    still = [r.getMessage() for r in caplog.records if "still runs" in r.getMessage()]
    assert len(still) == 1, caplog.text
    assert still[0].startswith("stopping: the background work still runs after 0 s"), still
    # the waiting task, by its coroutine, with the chain it waits in, innermost last
    assert "_background: _background (test_stopping_slow.py:" in still[0], still
    assert "> _committing (test_stopping_slow.py:" in still[0], still
    assert "took 0.2 s" in caplog.text
