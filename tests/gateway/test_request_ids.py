"""Which id of a caller's request the gateway keeps (``services/gateway/request_ids.py``)."""

from __future__ import annotations

from starlette.datastructures import Headers

from agentladder.services.gateway.request_ids import client_request_id


def test_the_first_request_id_header_sent_is_kept() -> None:
    """x-irid, then x-client-request-id, then x-request-id, any case; stripped; none
    sent: none."""
    both = Headers({"X-Request-Id": "common", "x-irid": "inspect-1"})
    assert client_request_id(both) == "inspect-1"
    assert client_request_id(Headers({"x-client-request-id": " sdk-1 ", "x-request-id": "c"})) == (
        "sdk-1"
    )
    assert client_request_id(Headers({"X-Request-ID": "common"})) == "common"
    assert client_request_id(Headers({})) is None


def test_an_id_that_cannot_be_kept_is_not() -> None:
    """Over 128 characters, empty, or not printable ASCII: none (the next header is not
    read instead: the caller's id was that one)."""
    assert client_request_id(Headers({"x-irid": "x" * 129, "x-request-id": "ok"})) is None
    assert client_request_id(Headers({"x-irid": "x" * 128})) == "x" * 128
    assert client_request_id(Headers({"x-irid": "  "})) is None
    assert client_request_id(Headers({"x-irid": "caf\u00e9"})) is None
