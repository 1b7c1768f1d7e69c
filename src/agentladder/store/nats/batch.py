"""JetStream atomic batch publish (ADR-50, nats-server >= 2.12): all messages or none.

A batch is a run of ordinary publishes carrying ``Nats-Batch-Id`` (same id, at most 64
characters) and ``Nats-Batch-Sequence`` (1, 2, ...); the last one also carries
``Nats-Batch-Commit: 1``. The first message is sent as a request (the server answers an
empty message once the batch is open), the middle ones are plain publishes, and the
commit is a request answered by a pub ack with ``batch`` and ``count``, or by an error.
The server checks every expectation header against the stream as it was before the
batch, at commit time, under the stream's lock; if any fails nothing is stored.

Limits (server defaults): 1000 messages per batch, 50 batches in flight per stream
(1000 per server), a batch idle for 10 s is abandoned. All messages must go to one
stream, which needs ``allow_atomic`` (see ``enable_atomic``). Within a batch, a subject
written earlier in the same batch cannot carry an expected sequence again.

Errors: a failed expectation (JetStream codes 10071 "wrong last sequence: N" and 10164
"wrong last sequence") raises ``RevisionConflict``; other JetStream API errors raise
``StoreError`` with the code and description, except 10210 (too many batches in flight)
and 10176 (the batch arrived incomplete: a plain publish of it was dropped on the way, as
seen under load while nats-server restarted) which are ``StoreUnavailable``, like a
timeout or no responders: nothing of the batch was stored and it may be sent again. A
timeout on the commit leaves its outcome unknown.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import nats.errors
import nats.js.errors
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import Header

from agentladder.errors import (
    InvalidInput,
    NotFound,
    RevisionConflict,
    StoreError,
    StoreUnavailable,
)

__all__ = [
    "BATCHES_IN_FLIGHT",
    "MAX_BATCH_MESSAGES",
    "BatchAck",
    "BatchGate",
    "BatchMessage",
    "enable_atomic",
    "publish_atomic",
    "publish_expected",
]

MAX_BATCH_MESSAGES = 1000
"""The server's default limit on messages in one atomic batch (error 10199 beyond it)."""

WRONG_LAST_SEQUENCE_CODES = frozenset({10071, 10164})
TOO_MANY_INFLIGHT_CODE = 10210
BATCHES_IN_FLIGHT = 16  # one instance's atomic batches open at once on one stream
INCOMPLETE_CODE = 10176
_ACTUAL = re.compile(r"wrong last sequence: (\d+)")


@dataclass(frozen=True, slots=True)
class BatchMessage:
    """One message of an atomic batch.

    ``expected_last_subject_sequence`` is the compare-and-set condition: the stream
    sequence of the subject's last message (a KV entry's revision), 0 for "the subject
    has no message yet", None for no condition.
    """

    subject: str
    payload: bytes
    expected_last_subject_sequence: int | None = None
    headers: Mapping[str, str] | None = None


@dataclass(frozen=True, slots=True)
class BatchAck:
    """A committed batch: its stream, the stream sequence of its last message, id, size.

    The batch's messages hold the sequences ``seq - count + 1`` to ``seq`` in order.
    """

    stream: str
    seq: int
    batch_id: str
    count: int


def _validate(messages: Sequence[BatchMessage]) -> None:
    if not messages:
        raise InvalidInput("messages", [], "an atomic batch needs at least one message")
    if len(messages) > MAX_BATCH_MESSAGES:
        raise InvalidInput("messages", len(messages), f"at most {MAX_BATCH_MESSAGES} per batch")
    written: set[str] = set()
    for message in messages:
        expected = message.expected_last_subject_sequence
        if expected is not None:
            if expected < 0:
                raise InvalidInput("expected_last_subject_sequence", expected, "must be >= 0")
            if message.subject in written:
                raise InvalidInput(
                    "messages",
                    message.subject,
                    "a subject written earlier in the batch cannot carry an expected sequence",
                )
        written.add(message.subject)


def _headers(message: BatchMessage, batch_id: str, index: int, commit: bool) -> dict[str, str]:
    headers = dict(message.headers or {})
    if message.expected_last_subject_sequence is not None:
        value = str(message.expected_last_subject_sequence)
        headers[Header.EXPECTED_LAST_SUBJECT_SEQUENCE.value] = value
    headers[Header.BATCH_ID.value] = batch_id
    headers[Header.BATCH_SEQUENCE.value] = str(index)
    if commit:
        headers[Header.BATCH_COMMIT.value] = "1"
    return headers


async def _request(
    nc: Client, subject: str, payload: bytes, headers: dict[str, str], deadline: float
) -> Msg:
    remaining = deadline - asyncio.get_running_loop().time()
    if remaining <= 0:
        raise StoreUnavailable(f"atomic batch to {subject!r} ran out of time")
    return await nc.request(subject, payload, timeout=remaining, headers=headers)


async def _conflict(
    nc: Client, stream: str, messages: Sequence[BatchMessage], description: str, timeout: float
) -> RevisionConflict:
    """Name the first message whose subject is no longer at its expected sequence."""
    match = _ACTUAL.search(description)
    reported = int(match.group(1)) if match else None
    conditioned = [m for m in messages if m.expected_last_subject_sequence is not None]
    js = nc.jetstream(timeout=timeout)
    for message in conditioned:
        try:
            current = (await js.get_last_msg(stream, message.subject)).seq or 0
        except nats.js.errors.NotFoundError:
            current = 0
        except (nats.errors.Error, OSError):
            break  # cannot tell which one; fall back to the server's report below
        if current != message.expected_last_subject_sequence:
            return RevisionConflict(
                message.subject, message.expected_last_subject_sequence, current
            )
    if conditioned:
        first = conditioned[0]
        return RevisionConflict(first.subject, first.expected_last_subject_sequence, reported)
    return RevisionConflict(stream, None, reported)


def _api_error(reply: dict[str, Any]) -> tuple[int, str, str] | None:
    error = reply.get("error")
    if not error:
        return None
    code = int(error.get("err_code") or error.get("code") or 0)
    return code, str(error.get("description", "")), str(reply.get("stream", ""))


async def _raise_for(
    nc: Client, data: bytes, messages: Sequence[BatchMessage], timeout: float
) -> dict[str, Any]:
    """Decode a server reply; raise the matching agentladder error if it is an error."""
    try:
        reply = json.loads(data)
    except ValueError as error:
        raise StoreError(f"atomic batch: undecodable reply {data[:200]!r}") from error
    if not isinstance(reply, dict):
        raise StoreError(f"atomic batch: unexpected reply {data[:200]!r}")
    failure = _api_error(reply)
    if failure is None:
        return reply
    code, description, stream = failure
    if code in WRONG_LAST_SEQUENCE_CODES:
        raise await _conflict(nc, stream, messages, description, timeout)
    text = f"JetStream error {code} on stream {stream!r}: {description}"
    if code in (TOO_MANY_INFLIGHT_CODE, INCOMPLETE_CODE):
        raise StoreUnavailable(text)
    raise StoreError(text)


class BatchGate:
    """The atomic batches one instance keeps open on one stream at once, at most ``limit``:
    the server allows 50 per stream, across all its clients, and refuses more (10210), so
    three instances at 16 each stay under it. A batch waits here for its turn instead."""

    def __init__(self, limit: int = BATCHES_IN_FLIGHT) -> None:
        self.limit = limit
        self._open = asyncio.Semaphore(limit)

    async def __aenter__(self) -> None:
        await self._open.acquire()

    async def __aexit__(self, *_: object) -> None:
        self._open.release()


async def publish_atomic(
    nc: Client,
    messages: Sequence[BatchMessage],
    *,
    timeout: float = 5.0,
    gate: BatchGate | None = None,
) -> BatchAck:
    """Publish ``messages`` as one atomic batch to the stream that holds their subjects
    (once ``gate``, the stream's, lets it open: the timeout counts from then).

    Returns the commit's ``BatchAck``. Raises ``RevisionConflict`` (naming the subject,
    its expected and current sequence) when an expectation fails, ``StoreUnavailable``
    on timeout or when no stream answers, ``StoreError`` for other server errors and
    ``InvalidInput`` for a batch the server would refuse. Nothing of a failed batch is
    stored.
    """
    _validate(messages)
    if gate is not None:
        async with gate:
            return await publish_atomic(nc, messages, timeout=timeout)
    batch_id = uuid.uuid4().hex
    deadline = asyncio.get_running_loop().time() + timeout
    last = len(messages)
    try:
        for index, message in enumerate(messages[:-1], start=1):
            headers = _headers(message, batch_id, index, commit=False)
            if index == 1:  # the server confirms the batch is open (or refuses it)
                reply = await _request(nc, message.subject, message.payload, headers, deadline)
                if reply.data:
                    await _raise_for(nc, reply.data, messages, timeout)
            else:
                await nc.publish(message.subject, message.payload, headers=headers)
        commit = messages[-1]
        headers = _headers(commit, batch_id, last, commit=True)
        reply = await _request(nc, commit.subject, commit.payload, headers, deadline)
    except (nats.errors.Error, OSError) as error:
        raise _unavailable(
            error, messages[0].subject, f"atomic batch {batch_id}", timeout
        ) from error
    ack = await _raise_for(nc, reply.data, messages, timeout)
    if ack.get("batch") != batch_id or ack.get("count") != last:
        raise StoreError(f"atomic batch {batch_id}: unexpected ack {ack!r}")
    return BatchAck(str(ack["stream"]), int(ack["seq"]), batch_id, last)


def _unavailable(error: BaseException, subject: str, what: str, timeout: float) -> StoreUnavailable:
    """The ``StoreUnavailable`` for a failed request: no responders, timeout, other."""
    if isinstance(error, nats.errors.NoRespondersError):
        return StoreUnavailable(f"no JetStream stream answers on {subject!r}")
    if isinstance(error, nats.errors.TimeoutError):
        return StoreUnavailable(f"{what} timed out after {timeout} s (it may have applied)")
    return StoreUnavailable(f"{what}: {error!r}")


async def enable_atomic(js: JetStreamContext, stream_name: str) -> bool:
    """Turn on ``allow_atomic`` for an existing stream (e.g. ``KV_<bucket>``), keeping the
    rest of its configuration. Returns True if it changed, False if already on."""
    try:
        info = await js.stream_info(stream_name)
        if info.config.allow_atomic:
            return False
        info.config.allow_atomic = True
        await js.update_stream(info.config)
    except nats.js.errors.NotFoundError as error:
        raise NotFound("stream", stream_name) from error
    except nats.js.errors.ServiceUnavailableError as error:
        raise StoreUnavailable(f"JetStream unavailable: {error}") from error
    except nats.js.errors.APIError as error:
        raise StoreError(f"cannot enable allow_atomic on {stream_name!r}: {error}") from error
    except (nats.errors.Error, OSError) as error:
        raise StoreUnavailable(f"JetStream unavailable: {error!r}") from error
    return True


async def publish_expected(nc: Client, message: BatchMessage, *, timeout: float = 5.0) -> int:
    """Publish one message with its expected last subject sequence (no batch); its sequence.

    A single message is atomic by itself, and unlike a batch commit the server does not
    sync its store for it, so a lone compare-and-set is several times cheaper this way.
    Errors as for ``publish_atomic``.
    """
    _validate([message])
    headers = dict(message.headers or {})
    if message.expected_last_subject_sequence is not None:
        value = str(message.expected_last_subject_sequence)
        headers[Header.EXPECTED_LAST_SUBJECT_SEQUENCE.value] = value
    try:
        reply = await nc.request(message.subject, message.payload, timeout=timeout, headers=headers)
    except (nats.errors.Error, OSError) as error:
        raise _unavailable(
            error, message.subject, f"publish to {message.subject!r}", timeout
        ) from error
    ack = await _raise_for(nc, reply.data, [message], timeout)
    return int(ack["seq"])
