"""Background passes: a known, passing cause is said once and its end once; anything else is
logged with its traceback at every pass."""

from __future__ import annotations

import asyncio
import logging

import pytest

from agentladder.errors import StoreUnavailable
from agentladder.services.passes import QuietPasses


def test_an_outage_is_said_once_and_its_end_once(caplog: pytest.LogCaptureFixture) -> None:
    """Five failing passes (the store away) log one warning; the first pass that works
    logs one 'resumed'; a later outage is said again."""
    outcomes: list[Exception | None] = [StoreUnavailable("nats: no servers")] * 5 + [None, None]
    outcomes += [StoreUnavailable("nats: timeout")]
    passes = QuietPasses("the skill fit", (StoreUnavailable,))

    async def one_pass() -> None:
        error = outcomes.pop(0)
        if error is not None:
            raise error

    async def main() -> list[bool]:
        return [await passes.run(one_pass) for _ in range(8)]

    with caplog.at_level(logging.WARNING, logger="agentladder.services.passes"):
        worked = asyncio.run(main())
    assert worked == [False] * 5 + [True, True, False]
    assert [r.getMessage() for r in caplog.records] == [
        "the skill fit waits: nats: no servers",
        "the skill fit resumed",
        "the skill fit waits: nats: timeout",
    ]
    assert all(r.exc_info is None for r in caplog.records)


def test_an_unknown_failure_is_logged_with_its_traceback_every_time(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A failure of no known cause is a bug: each pass logs it with the traceback."""
    passes = QuietPasses("recovery", (StoreUnavailable,))

    async def one_pass() -> None:
        raise KeyError("lost")

    async def main() -> None:
        for _ in range(3):
            assert not await passes.run(one_pass)

    with caplog.at_level(logging.WARNING, logger="agentladder.services.passes"):
        asyncio.run(main())
    assert [r.getMessage() for r in caplog.records] == ["recovery failed"] * 3
    assert all(r.exc_info is not None for r in caplog.records)
