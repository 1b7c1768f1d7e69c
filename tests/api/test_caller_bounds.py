"""Each caller's requests in flight, rate and bytes, per token, with a clock given."""

from __future__ import annotations

from agentladder.api.auth import Caller
from agentladder.api.caller_bounds import CallerBounds, Excess, Passage
from agentladder.config import ApiSettings, TokenSettings

MIB = 1024 * 1024


class Clock:
    """A monotonic clock that moves when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _client(token: str, **own: object) -> Caller:
    settings = TokenSettings.model_validate(
        {"role": "client", "token": token, "name": f"c-{token[:4]}", **own}
    )
    return Caller("client", None, settings)


def test_a_client_past_its_in_flight_bound_is_refused_until_one_ends() -> None:
    """Past max_in_flight a token is refused (Retry-After 1); one ending frees a slot."""
    bounds = CallerBounds(ApiSettings(), Clock())
    one, other = _client("a" * 16, max_in_flight=2), _client("b" * 16, max_in_flight=2)
    first, second = bounds.enter(one), bounds.enter(one)
    assert isinstance(first, Passage)
    assert isinstance(second, Passage)
    third = bounds.enter(one)
    assert isinstance(third, Excess)
    assert third.retry_after_s == 1
    assert "max_in_flight 2" in third.message
    assert isinstance(bounds.enter(other), Passage)
    bounds.leave(first)
    bounds.leave(first)  # a second leave of the same request changes nothing
    assert bounds.in_flight[bounds._key(one)] == 1
    assert isinstance(bounds.enter(one), Passage)
    assert isinstance(bounds.enter(one), Excess)


def test_the_rate_refuses_past_the_burst_with_the_headers() -> None:
    """Past its burst a token is refused with Retry-After and the x-ratelimit headers."""
    clock = Clock()
    bounds = CallerBounds(ApiSettings(), clock)
    caller = _client("a" * 16, rate_per_s=1, burst=2)
    passed = [bounds.enter(caller) for _ in range(2)]
    assert [dict(p.headers)[b"x-ratelimit-remaining-requests"] for p in passed
            if isinstance(p, Passage)] == [b"1", b"0"]  # fmt: skip
    refused = bounds.enter(caller)
    assert isinstance(refused, Excess)
    assert refused.retry_after_s == 1
    assert dict(refused.headers) == {
        b"x-ratelimit-limit-requests": b"2",
        b"x-ratelimit-remaining-requests": b"0",
        b"x-ratelimit-reset-requests": b"2s",
    }
    for passage in passed:
        assert isinstance(passage, Passage)
        bounds.leave(passage)
    clock.now += 1.0
    assert isinstance(bounds.enter(caller), Passage)


def test_a_request_refused_for_its_rate_is_not_counted_in_flight() -> None:
    """A request refused for its rate is not counted in flight."""
    bounds = CallerBounds(ApiSettings(), Clock())
    caller = _client("a" * 16, rate_per_s=1, burst=1)
    assert isinstance(bounds.enter(caller), Passage)
    assert isinstance(bounds.enter(caller), Excess)
    assert bounds.in_flight[bounds._key(caller)] == 1


def test_other_roles_have_no_bound_by_default() -> None:
    """Orchestrator and open-loopback requests pass uncounted by default."""
    bounds = CallerBounds(ApiSettings(), Clock())
    judge = Caller("orchestrator", None, TokenSettings(role="orchestrator", token="j" * 16))
    entries = [bounds.enter(judge) for _ in range(1000)] + [bounds.enter(Caller("admin"))]
    assert all(isinstance(e, Passage) and not e.counted and not e.headers for e in entries)
    assert bounds.in_flight == {}


def test_the_shares_follow_the_settings() -> None:
    """The byte shares are the settings' fractions of api.max_buffered_bytes."""
    shares = CallerBounds(ApiSettings(), Clock()).shares
    assert (shares.total, shares.per_token) == (32 * MIB, 16 * MIB)
    assert shares.per_role == {
        "admin": 32 * MIB, "orchestrator": 32 * MIB, "agent": 16 * MIB, "client": 24 * MIB,
        "metrics": 16 * MIB,
    }  # fmt: skip
