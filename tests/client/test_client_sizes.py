"""The client reads answers in pieces, up to a cap: against a real local server sending
huge bodies (``hugebody.py``), it refuses a success past ``max_answer_bytes`` without
reading it (the server could send a small part of it), and reads an error's body only up
to ``max_error_bytes`` (the server's message still shown). Sync and async; ``Body``'s
rule on its own."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest

from agentladder.client import AnswerTooLarge, AsyncLadder, InvalidInput, Ladder
from agentladder.client.calls import profile
from agentladder.client.core import MAX_ANSWER_BYTES, MAX_ERROR_BYTES, Body, Caps
from tests.client.hugebody import HugeServer

MIB = 1024 * 1024
BOUND = 32 * MIB
"""The most the server may get out before the client stops it: socket buffers on
loopback hold a few MiB; the bodies sent are 200 MiB and more."""


@pytest.fixture(scope="module")
def huge() -> Iterator[HugeServer]:
    """The huge-body server for the module, stopped at its end."""
    server = HugeServer().start()
    try:
        yield server
    finally:
        server.stop()


def test_an_announced_huge_answer_is_refused_before_it_is_read(huge: HugeServer) -> None:
    """200 with Content-Length 200 MiB, default caps: ``AnswerTooLarge`` naming both sizes
    (209715200 announced, 67108864 the cap); the server got out a bounded part of it."""
    with Ladder(huge.base, retries=0) as ladder, pytest.raises(AnswerTooLarge) as refused:
        ladder.profile("announced-200")
    message = refused.value.message
    assert "209715200 bytes announced" in message
    assert "max_answer_bytes (67108864 bytes)" in message
    assert refused.value.code == "answer_too_large"
    assert refused.value.status == 200
    assert huge.wait_sent("announced-200") < BOUND


def test_an_unannounced_huge_answer_stops_at_the_cap(huge: HugeServer) -> None:
    """A chunked 256 MiB answer with a 1 MiB cap: refused once more than 1 MiB came;
    the server sent far less than the whole."""
    with Ladder(huge.base, retries=0, max_answer_bytes=MIB) as ladder:
        with pytest.raises(AnswerTooLarge) as refused:
            ladder.profile("chunked-256")
        assert "more than 1048576 bytes came" in refused.value.message
        assert ladder.profile("small").xp == 40  # the client still works
    assert huge.wait_sent("chunked-256") < BOUND


def test_an_error_body_is_read_up_to_its_cap(huge: HugeServer) -> None:
    """A 400 whose body is the API's error then 200 MiB of spaces: ``InvalidInput`` with
    the server's message, read from the first 64 KiB; the rest is not read."""
    with Ladder(huge.base, retries=0) as ladder, pytest.raises(InvalidInput) as refused:
        ladder.profile("error-200")
    assert refused.value.message == "the server's own words"
    assert refused.value.code == "bad_request"
    assert huge.wait_sent("error-200") < BOUND


def test_the_async_client_stops_at_the_cap_too(huge: HugeServer) -> None:
    """``AsyncLadder`` with a 1 MiB cap on a chunked 300 MiB answer: refused, bounded."""

    async def run() -> str:
        async with AsyncLadder(huge.base, retries=0, max_answer_bytes=MIB) as ladder:
            try:
                await ladder.profile("chunked-300")
            except AnswerTooLarge as refused:
                return refused.message
        raise AssertionError("the huge answer was read")

    assert "more than 1048576 bytes came" in asyncio.run(run())
    assert huge.wait_sent("chunked-300") < BOUND


def _response(status: int, **headers: str) -> httpx.Response:
    return httpx.Response(status, headers=headers)


def test_body_keeps_an_answer_up_to_its_cap_and_refuses_one_past() -> None:
    """A success of exactly the cap is kept whole; one byte more is ``AnswerTooLarge``."""
    body = Body(profile("a"), _response(200), Caps(answer=10, error=4))
    assert body.add(b"12345") is False
    assert body.add(b"67890") is False
    assert body.content() == b"1234567890"
    with pytest.raises(AnswerTooLarge) as refused:
        body.add(b"!")
    assert "GET /oracle/profiles/a" in refused.value.message
    assert "max_answer_bytes (10 bytes)" in refused.value.message


def test_body_refuses_an_announced_size_past_the_cap_at_once() -> None:
    """Content-Length over the cap refuses before any piece; a compressed body's length
    says nothing of its decoded size, so it is read and counted instead."""
    with pytest.raises(AnswerTooLarge):
        Body(profile("a"), _response(200, **{"content-length": "11"}), Caps(answer=10))
    gzipped = _response(200, **{"content-length": "11", "content-encoding": "gzip"})
    assert Body(profile("a"), gzipped, Caps(answer=10)).add(b"x") is False


def test_body_cuts_an_error_at_its_cap_and_says_stop() -> None:
    """An error's body is kept up to its cap, the piece passing it cut, and ``add`` says
    to stop reading; an announced huge error is still read up to the cap."""
    big = _response(500, **{"content-length": str(10 * MIB)})
    body = Body(profile("a"), big, Caps(answer=10, error=4))
    assert body.add(b"ab") is False
    assert body.add(b"cdef") is True
    assert body.content() == b"abcd"


@pytest.mark.parametrize(("answer", "error"), [(0, 1), (1, -5), (True, 1), (1.5, 1)])
def test_caps_refuse_what_is_not_a_size(answer: object, error: object) -> None:
    """A cap that is not a whole number of bytes, at least 1: one line naming the argument
    and the value."""
    with pytest.raises(ValueError, match=r"^max_(answer|error)_bytes must be a number of bytes"):
        Ladder("http://127.0.0.1:9", max_answer_bytes=answer, max_error_bytes=error)  # type: ignore[arg-type]


def test_the_default_caps_are_64_mib_and_64_kib() -> None:
    """``Ladder`` and ``AsyncLadder`` read at most 64 MiB of a success, 64 KiB of an error."""
    assert (MAX_ANSWER_BYTES, MAX_ERROR_BYTES) == (64 * MIB, 64 * 1024)
    with Ladder("http://127.0.0.1:9") as ladder:
        assert ladder.caps == Caps(64 * MIB, 64 * 1024)
    ladder_async = AsyncLadder("http://127.0.0.1:9")
    assert ladder_async.caps == Caps(64 * MIB, 64 * 1024)
    asyncio.run(ladder_async.close())
