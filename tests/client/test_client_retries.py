"""Retries with httpx.MockTransport: a 503 with Retry-After then 200 is one answer; a
server that always answers 429 is tried a bounded number of times, within a bounded
wait; a lost connection is tried again, then Unavailable. Sync and async."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from agentladder.client import (
    AsyncLadder,
    JudgmentRequest,
    Ladder,
    RateLimited,
    ServerError,
    Unavailable,
)

PROFILE = {"id": "sim_a", "xp": 40, "level": "rookie"}
BUSY = {"error": {"code": "store_unavailable", "message": "the store is down"}}
SLOW = {"error": {"code": "too_many_polls", "message": "slow down"}}


def answers(*replies: httpx.Response) -> tuple[httpx.MockTransport, list[httpx.Request]]:
    """A transport answering ``replies`` in turn (the last one again and again)."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return replies[min(len(seen), len(replies)) - 1]

    return httpx.MockTransport(handler), seen


def unavailable_then_ok() -> tuple[httpx.MockTransport, list[httpx.Request]]:
    """503 with Retry-After: 2, then the profile."""
    return answers(
        httpx.Response(503, json=BUSY, headers={"Retry-After": "2"}),
        httpx.Response(200, json=PROFILE),
    )


def test_a_503_with_retry_after_then_200_is_one_answer() -> None:
    """The client waits what Retry-After says, asks again and returns the 200's model."""
    transport, seen = unavailable_then_ok()
    with Ladder("http://ladder.test", token="t" * 20, transport=transport) as ladder:
        waits: list[float] = []
        ladder._sleep = waits.append
        profile = ladder.profile("sim_a")
    assert (profile.id, profile.xp) == ("sim_a", 40)
    assert waits == [2.0]
    assert len(seen) == 2
    assert seen[0].headers["authorization"] == "Bearer " + "t" * 20


def test_always_429_is_tried_a_bounded_number_of_times() -> None:
    """retries=3: four requests, three waits (Retry-After 1), then RateLimited with the
    server's hint; a hint past max_wait ends the tries at once."""
    transport, seen = answers(httpx.Response(429, json=SLOW, headers={"Retry-After": "1"}))
    with Ladder("http://ladder.test", transport=transport, retries=3) as ladder:
        waits: list[float] = []
        ladder._sleep = waits.append
        with pytest.raises(RateLimited) as limited:
            ladder.judge(JudgmentRequest(agent_id="sim_a", contract_id="c1", score=8))
    assert (len(seen), waits) == (4, [1.0, 1.0, 1.0])
    assert (limited.value.status, limited.value.code, limited.value.retry_after) == (
        429, "too_many_polls", 1.0,
    )  # fmt: skip
    transport, seen = answers(httpx.Response(429, json=SLOW, headers={"Retry-After": "600"}))
    with Ladder("http://ladder.test", transport=transport, max_wait=30) as ladder:
        ladder._sleep = waits.append
        with pytest.raises(RateLimited):
            ladder.profile("sim_a")
    assert len(seen) == 1


def test_the_total_wait_is_bounded() -> None:
    """Without Retry-After the waits double (0.5, 1, 2...) and stop before max_wait."""
    transport, seen = answers(httpx.Response(503, json=BUSY))
    with Ladder("http://ladder.test", transport=transport, retries=10, max_wait=4) as ladder:
        waits: list[float] = []
        ladder._sleep = waits.append
        with pytest.raises(Unavailable):
            ladder.profile("sim_a")
    assert waits == [0.5, 1.0, 2.0]
    assert len(seen) == 4


def test_a_lost_connection_is_tried_again_then_unavailable() -> None:
    """A connection error is retried like a 503; after the tries, Unavailable (no status)."""
    tries: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        tries.append(request)
        raise httpx.ConnectError("connection refused", request=request)

    with Ladder("http://ladder.test", transport=httpx.MockTransport(handler), retries=2) as ladder:
        ladder._sleep = lambda _: None
        with pytest.raises(Unavailable) as lost:
            ladder.profile("sim_a")
    assert len(tries) == 3
    assert lost.value.status is None
    assert lost.value.code == "no_answer"
    assert "connection refused" in str(lost.value)


def test_an_answer_outside_the_api_is_a_server_error() -> None:
    """A 200 that is not the model, or an error that is not the API's shape: ServerError,
    never a pydantic traceback; other statuses are not retried."""
    transport, seen = answers(httpx.Response(200, json={"unexpected": True}))
    ladder = Ladder("http://ladder.test", transport=transport)
    with ladder, pytest.raises(ServerError, match="not a AgentProfile"):
        ladder.profile("sim_a")
    transport, seen = answers(httpx.Response(500, text="<html>oops</html>"))
    ladder = Ladder("http://ladder.test", transport=transport)
    with ladder, pytest.raises(ServerError) as failed:
        ladder.profile("sim_a")
    assert failed.value.status == 500
    assert "oops" in failed.value.message
    assert len(seen) == 1


def test_async_retries_the_same_way() -> None:
    """AsyncLadder: 503 then 200 is one answer after Retry-After; always 429 is bounded."""

    async def main() -> None:
        sync_transport, seen = unavailable_then_ok()

        async def handler(request: httpx.Request) -> httpx.Response:
            return sync_transport.handle_request(request)

        waits: list[float] = []

        async def sleep(seconds: float) -> None:
            waits.append(seconds)

        async with AsyncLadder("http://ladder.test",
                               transport=httpx.MockTransport(handler)) as ladder:  # fmt: skip
            ladder._sleep = sleep
            assert (await ladder.profile("sim_a")).xp == 40
        assert (waits, len(seen)) == ([2.0], 2)
        limited, asked = answers(httpx.Response(429, json=SLOW, headers={"Retry-After": "1"}))

        async def always(request: httpx.Request) -> httpx.Response:
            return limited.handle_request(request)

        async with AsyncLadder(
            "http://ladder.test", transport=httpx.MockTransport(always), retries=2
        ) as ladder:
            ladder._sleep = sleep
            with pytest.raises(RateLimited):
                await ladder.profile("sim_a")
        assert len(asked) == 3

    asyncio.run(main())


def test_a_judgment_is_sent_as_its_model_holds_it() -> None:
    """The body is the fields the caller set; a scaled score goes on 0-10, without scale."""
    transport, seen = answers(httpx.Response(503, json=BUSY))
    ladder = Ladder("http://ladder.test", transport=transport, retries=0)
    with ladder, pytest.raises(Unavailable):
        ladder.judge(JudgmentRequest(agent_id="a", contract_id="c", score=80, scale="0-100"))
    assert json.loads(seen[0].content) == {"agent_id": "a", "contract_id": "c", "score": 8.0}
    assert seen[0].headers["content-type"] == "application/json"
