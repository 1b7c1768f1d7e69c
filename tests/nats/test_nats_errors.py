"""What a nats-py error becomes: unavailable (503, retried by callers) or a store error."""

from __future__ import annotations

import nats.errors
import nats.js.errors
import pytest

from agentladder.errors import StoreError, StoreUnavailable
from agentladder.store.nats.config import nats_errors


@pytest.mark.parametrize(
    "raised",
    [nats.errors.NoRespondersError(), nats.js.errors.NoStreamResponseError(),
     nats.errors.TimeoutError(), nats.js.errors.ServiceUnavailableError()],
)  # fmt: skip
def test_a_server_going_away_is_unavailable(raised: Exception) -> None:
    """No responders, no stream's answer to a publish (the server stopping under it), a
    time-out: ``StoreUnavailable``, which the API answers 503, never an internal error."""
    with pytest.raises(StoreUnavailable), nats_errors("put"):
        raise raised


def test_another_jetstream_error_is_a_store_error() -> None:
    """A JetStream API error with its code stays a ``StoreError``."""
    with pytest.raises(StoreError) as found, nats_errors("put"):
        raise nats.js.errors.BadRequestError(code=400, err_code=10052, description="bad")
    assert not isinstance(found.value, StoreUnavailable)
    assert "10052" in str(found.value)
