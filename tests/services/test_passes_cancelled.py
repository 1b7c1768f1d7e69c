"""A stop cancels the background loops and waits for them; a loop whose cancellation was
lost inside a pass went on to its pause, and the stop overran its bound (a NATS fault
test: the recovery loop slept its interval after a read's ``asyncio.wait_for`` returned
the answer that came with the cancellation, Python 3.11). ``cancelled`` cancels again."""

from __future__ import annotations

import asyncio

from agentladder.services.passes import cancelled


async def _losing(lost: list[bool]) -> None:
    """A background loop whose pass loses a cancellation, as a library's wait can."""
    while True:
        try:
            await asyncio.sleep(0.01)  # the pass
        except asyncio.CancelledError:
            lost.append(True)
        await asyncio.sleep(3600)  # the pause to the next pass


async def _waiting_for(answers: asyncio.Queue[asyncio.Future[int]]) -> None:
    """A loop whose pass waits for an answer with ``asyncio.wait_for``."""
    while True:
        await asyncio.wait_for(await answers.get(), 5)
        await asyncio.sleep(3600)


def test_a_loop_that_lost_its_cancellation_is_cancelled_again() -> None:
    async def run() -> None:
        lost: list[bool] = []
        task = asyncio.ensure_future(_losing(lost))
        await asyncio.sleep(0)  # in its pass
        await asyncio.wait_for(cancelled([task], again_s=0.05), 10)
        assert lost == [True]
        assert task.cancelled()

    asyncio.run(run())


def test_a_cancellation_arriving_with_the_answer_of_a_wait_for_still_stops_the_loop() -> None:
    """The answer and the cancellation in the same turn of the loop: Python 3.11's
    ``wait_for`` returns the answer and the loop goes on to its pause; it ends anyway."""

    async def run() -> None:
        answers: asyncio.Queue[asyncio.Future[int]] = asyncio.Queue()
        answer: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        await answers.put(answer)
        task = asyncio.ensure_future(_waiting_for(answers))
        await asyncio.sleep(0)  # waiting for the answer
        answer.set_result(1)
        await asyncio.wait_for(cancelled([task], again_s=0.05), 10)
        assert task.cancelled()

    asyncio.run(run())


def test_tasks_already_ended_and_their_exceptions_are_taken() -> None:
    async def failing() -> None:
        raise ValueError("a pass failed")

    async def run() -> None:
        done = asyncio.ensure_future(failing())
        await asyncio.sleep(0)
        await cancelled([done])
        assert isinstance(done.exception(), ValueError)

    asyncio.run(run())
