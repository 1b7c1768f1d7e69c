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
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from agentladder import __version__
from agentladder.api.schemas import ErrorBody
from agentladder.client.errors import ServerError, Unavailable, error_for, retry_after

__all__ = ["Call", "Retry", "chunks", "headers", "no_answer", "parse"]

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")
RETRIED = frozenset({429, 503})
"""Statuses tried again (with their ``Retry-After``)."""


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


def parse(call: Call[M], response: httpx.Response) -> M:
    """The answer as its model, or the client's exception for an error. Fields a newer
    server added are ignored, so that an older client still reads its answers."""
    if response.status_code >= 400:
        raise error_for(response)
    try:
        return call.answer.model_validate_json(response.content, extra="ignore")
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
    tries."""
    reason = f"{call.method} {call.path}: no answer ({type(error).__name__}: {error})"
    return Unavailable(None, ErrorBody(code="no_answer", message=reason))
