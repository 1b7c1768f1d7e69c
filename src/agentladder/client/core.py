"""What the sync and async clients share: each method's request, the parsing of its
answer, and when to try again. No I/O here: ``sync.py`` and ``async_.py`` send.

Retries. A 503 or 429 answer, or a connection that failed or timed out, is tried again
up to ``retries`` times, after the server's ``Retry-After`` (else 0.5 s, 1 s, 2 s...),
while the waits add up to at most ``max_wait`` seconds; a hint past that budget ends the
tries at once. Only calls that are safe to repeat are repeated, and every call of the
client is: a judgment, a batch item and a verdict apply once per (agent, contract), a
report once per deliberation id (the same again answers the first result, marked
``duplicate``), a heartbeat replaces the declaration, and the others store nothing (a
Sentinel check draws again). ``POST /deliberation``, which starts a new deliberation at
each call, is not a method of the client.

Input. A method taking a request model takes it as the model, a dict, or keyword
arguments (``as_model``): the model validates a dict or the keywords as it validates
itself, and a refusal is the client's ``InvalidInput`` naming the field and the value in
one line, as the server's 422 would (nothing is sent); an unknown field offers the closest
known one. A model with keywords too is a ``TypeError``.

Sizes. An answer is read in pieces (``Body``), never whole before it is checked: a
success's body up to ``max_answer_bytes`` (64 MiB by default), refused past it with
``AnswerTooLarge`` (at once when its ``Content-Length`` says so, else as soon as more
came), and an error's body up to ``max_error_bytes`` (64 KiB), the rest left unread: the
error is made of what was read (the server's message, or the start of its text). The
bytes counted are the decoded ones, so a compressed answer is bounded too.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import httpx
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from agentladder import __version__
from agentladder.api.schemas import ErrorBody
from agentladder.client.errors import (
    AnswerTooLarge,
    InvalidInput,
    ServerError,
    Unauthorized,
    Unavailable,
    error_for,
    retry_after,
)
from agentladder.errors import InvalidInput as ModelInvalid
from agentladder.errors import shown_value
from agentladder.unreached import not_connected

__all__ = [
    "MAX_ANSWER_BYTES",
    "MAX_ERROR_BYTES",
    "NO_TOKEN",
    "Body",
    "Call",
    "Caps",
    "Retry",
    "as_model",
    "chunks",
    "headers",
    "no_answer",
    "parse",
]

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")
RETRIED = frozenset({429, 503})
"""Statuses tried again (with their ``Retry-After``)."""
MAX_ANSWER_BYTES = 64 * 1024 * 1024
"""The largest answer read by default (a skill board of 1,000 agents is under 1 MiB)."""
MAX_ERROR_BYTES = 64 * 1024
"""The most of an error's body read by default (the API's errors are under 2 KiB)."""


@dataclass(frozen=True)
class Caps:
    """The most of an answer's body the client reads: a success's, an error's."""

    answer: int = MAX_ANSWER_BYTES
    error: int = MAX_ERROR_BYTES

    def __post_init__(self) -> None:
        for name, value in (("max_answer_bytes", self.answer), ("max_error_bytes", self.error)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a number of bytes, at least 1, not {value!r}")


class Body:
    """One answer's body, read in pieces up to its cap (``add`` each piece as it comes).

    A success past ``caps.answer`` raises ``AnswerTooLarge``, when its ``Content-Length``
    announces it (before any piece is read) or when the pieces pass it; an error's body
    is kept up to ``caps.error`` and ``add`` then says to stop reading."""

    def __init__(self, call: Call[Any], response: httpx.Response, caps: Caps) -> None:
        self.call = call
        self.status = response.status_code
        self.error = response.status_code >= 400
        self.limit = caps.error if self.error else caps.answer
        self._kept = bytearray()
        announced = _announced(response)
        if not self.error and announced is not None and announced > self.limit:
            raise self._too_large(f"{announced} bytes announced (Content-Length)")

    def add(self, piece: bytes) -> bool:
        """Keep ``piece``; True when no more should be read (an error's cap reached)."""
        room = self.limit - len(self._kept)
        if len(piece) <= room:
            self._kept += piece
            return self.error and len(self._kept) == self.limit
        if not self.error:
            raise self._too_large(f"more than {self.limit} bytes came")
        self._kept += piece[:room]
        return True

    def content(self) -> bytes:
        """What was kept."""
        return bytes(self._kept)

    def _too_large(self, seen: str) -> AnswerTooLarge:
        what = f"{self.call.method} {self.call.path}"
        message = (
            f"{what}: the answer is larger than the client's max_answer_bytes"
            f" ({self.limit} bytes): {seen}; it was not read"
        )
        return AnswerTooLarge(self.status, ErrorBody(code="answer_too_large", message=message))


def _announced(response: httpx.Response) -> int | None:
    """The body's size from ``Content-Length``, when its bytes are the body's own (not
    compressed); None when it says nothing sure."""
    if response.headers.get("content-encoding", "identity").lower() != "identity":
        return None
    length = response.headers.get("content-length", "")
    return int(length) if length.isdigit() else None


@dataclass(frozen=True)
class Call(Generic[M]):
    """One request of the API and the model of its answer."""

    method: str
    path: str
    answer: type[M]
    body: BaseModel | None = None
    params: dict[str, Any] = field(default_factory=dict)
    whole: bool = False
    exclude: frozenset[str] = frozenset()

    def content(self) -> bytes | None:
        """The body as JSON: the fields the caller set, the defaults left to the server
        (``whole``: every field, as a heartbeat's declaration is)."""
        if self.body is None:
            return None
        dumped = self.body.model_dump_json(exclude_unset=not self.whole, exclude=set(self.exclude))
        return dumped.encode()

    def query(self) -> dict[str, Any]:
        """The query parameters that have a value."""
        return {k: v for k, v in self.params.items() if v is not None}


@dataclass
class Retry:
    """The retry budget of one call: how many tries are left, how long may still be
    waited in all."""

    retries: int
    max_wait: float
    waited: float = 0.0
    tried: int = 0

    def delay(self, response: httpx.Response | None) -> float | None:
        """How long to wait before trying again after ``response`` (None: no answer came),
        or None to stop: no try left, a status not retried, or a wait past the budget."""
        if response is not None and response.status_code not in RETRIED:
            return None
        if self.tried >= self.retries:
            return None
        hint = None if response is None else retry_after(response)
        wait = 0.5 * 2**self.tried if hint is None else hint
        if self.waited + wait > self.max_wait:
            return None
        self.tried += 1
        self.waited += wait
        return wait


def headers(token: str | None) -> dict[str, str]:
    """The headers of every request: JSON, the client's name, the bearer token."""
    sent = {"accept": "application/json", "user-agent": f"agentladder-client/{__version__}"}
    if token is not None:
        sent["authorization"] = f"Bearer {token}"
    return sent


NO_TOKEN = "; this client has no token: give it one, Ladder(url, token=...)"
"""Added to a 401's message when the client sent no token."""


def parse(call: Call[M], response: httpx.Response, content: bytes, *, tokenless: bool = False) -> M:
    """The answer (its body read: ``content``) as its model, or the client's exception
    for an error (a 401 of a client without a token says how to give one). Fields a
    newer server added are ignored, so that an older client still reads its answers."""
    if response.status_code >= 400:
        error = error_for(response, content)
        if tokenless and isinstance(error, Unauthorized):
            told = error.error.model_copy(update={"message": error.message + NO_TOKEN})
            raise Unauthorized(error.status, told)
        raise error
    try:
        return call.answer.model_validate_json(content, extra="ignore")
    except ValidationError as error:
        what = f"{call.method} {call.path}: not a {call.answer.__name__}"
        detail = str(error.errors(include_url=False)[0]["msg"])
        answer = ErrorBody(code="unexpected_answer", message=f"{what} ({detail})")
        raise ServerError(response.status_code, answer) from None


def chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """``items`` in lists of ``size`` at most, in order."""
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def no_answer(call: Call[Any], error: httpx.TransportError) -> Unavailable:
    """The error for a call that got no answer (connection failed, timed out) after its
    tries: a connection refused says where, and to check that the server runs there."""
    reason = f"{call.method} {call.path}: no answer ({type(error).__name__}: {error})"
    if isinstance(error, httpx.ConnectError):
        reason = not_connected(error) or reason
    return Unavailable(None, ErrorBody(code="no_answer", message=reason))


def as_model(kind: type[M], given: object, fields: Mapping[str, Any], *, where: str = "") -> M:
    """``given`` (a ``kind``, or a dict of its fields) or the keyword ``fields`` as a
    ``kind``: validated by the model, a refusal as the client's ``InvalidInput`` (its
    field prefixed by ``where``: ``judgments.3.``). ``TypeError`` for both forms at once,
    or for a value that is neither a model nor a dict."""
    name = kind.__name__
    if given is not None and fields:
        named = ", ".join(sorted(fields))
        raise TypeError(
            f"give a {name} (or a dict) or keyword arguments, not both: got a"
            f" {type(given).__name__} and the keywords {named}"
        )
    if isinstance(given, kind):
        return given
    if given is None:
        values = dict(fields)
    elif isinstance(given, Mapping):
        values = dict(given)
    else:
        raise TypeError(
            f"expected a {name}, a dict or keyword arguments, not {type(given).__name__}"
        )
    for key in values:
        if key not in kind.model_fields:
            raise _refused(where + str(key), values[key], _unknown(str(key), kind))
    try:
        return kind.model_validate(values)
    except ValidationError as error:
        raise _refusal(error.errors()[0], where) from None


def _unknown(key: str, kind: type[BaseModel]) -> str:
    close = difflib.get_close_matches(key, list(kind.model_fields), n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"is not a field of {kind.__name__}{hint}"


def _refusal(detail: ErrorDetails, where: str) -> InvalidInput:
    """One validation error as the server's 422 tells it: ``field: reason (value)``."""
    loc = ".".join(str(part) for part in detail["loc"])
    field = ".".join(part for part in (where.rstrip("."), loc) if part)
    cause = detail.get("ctx", {}).get("error")
    if isinstance(cause, ModelInvalid):  # a model's own check names its field
        return _refused(".".join(p for p in (field, cause.field) if p), cause.value, cause.reason)
    if detail["type"] == "missing":
        return _refused(field, None, "is required", show=False)
    reason = str(detail["msg"]).removeprefix("Value error, ")
    return _refused(field or "body", detail.get("input"), reason)


def _refused(field: str, value: object, reason: str, *, show: bool = True) -> InvalidInput:
    message = f"{field}: {reason} ({shown_value(value)})" if show else f"{field}: {reason}"
    plain = value if isinstance(value, str | int | float | bool) or value is None else None
    shown = shown_value(value) if plain is None and value is not None else plain
    body = ErrorBody(code="invalid_input", message=message, field=field, value=shown)
    return InvalidInput(None, body)
