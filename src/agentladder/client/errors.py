"""The client's one exception tree, mapped from the API's error shape
(``{"error": {"code", "message", "field", "value", ...}}``, docs/api.md "Errors")::

    LadderError              any failure; .status, .code, .message, .error (the body)
    ├── InvalidInput         400 or 422: .field, .value (refused input; 413 and 415 too;
    │                        status None: refused by the client before sending)
    │   └── TooFewAgents     400 too_few_agents: .qualified, .excluded
    ├── Unauthorized         401: no token, or one the server does not know
    ├── Forbidden            403: the token's role may not
    ├── NotFound             404
    ├── Conflict             409: the same id with another payload
    ├── RetryLater           asked to come back later: .retry_after (seconds, or None)
    │   ├── RateLimited      429, after the retries
    │   └── Unavailable      503 (store unavailable, busy) after the retries, or no answer
    └── ServerError          any other status, or an answer that is not the API's
        └── AnswerTooLarge   an answer past the client's max_answer_bytes, left unread
"""

from __future__ import annotations

import httpx
from pydantic import ValidationError

from agentladder.api.schemas import ErrorBody, ErrorOut
from agentladder.domain.deliberation import Excluded
from agentladder.domain.routing.spec import NotChosen

__all__ = [
    "AnswerTooLarge",
    "Conflict",
    "Forbidden",
    "InvalidInput",
    "LadderError",
    "NotFound",
    "RateLimited",
    "RetryLater",
    "ServerError",
    "TooFewAgents",
    "Unauthorized",
    "Unavailable",
    "error_for",
    "retry_after",
]


class LadderError(Exception):
    """A call the API refused or could not answer; ``str()`` is one line: the status
    (none when no answer came, or when the client refused the input before sending it),
    the code, the message."""

    def __init__(self, status: int | None, error: ErrorBody) -> None:
        self.status = status
        self.error = error
        self.code = error.code
        self.message = error.message
        sent = f"{status} " if status is not None else ""
        super().__init__(f"{sent}{error.code}: {error.message}")

    @property
    def suggestions(self) -> list[str]:
        """The closest known ids to one nobody knows (``did you mean``: a judgment's or a
        deliberation's unknown agent, an agent or profile not found); [] when none."""
        return self.error.suggestions or []


class InvalidInput(LadderError):
    """Refused input (400, 413, 415, 422): ``field`` and ``value`` name it (422); also
    raised by the client itself, ``status`` None, for a dict or keyword arguments its
    model refuses (nothing was sent)."""

    @property
    def field(self) -> str | None:
        """The refused field's path (``judgments.3.score``), when the API named one."""
        return self.error.field

    @property
    def value(self) -> str | int | float | bool | None:
        """The refused value as the API echoed it."""
        return self.error.value


class TooFewAgents(InvalidInput):
    """Fewer agents qualify than asked for: who did and who was left out, with why."""

    @property
    def qualified(self) -> list[str]:
        """The agents that qualified."""
        return self.error.qualified or []

    @property
    def excluded(self) -> list[Excluded | NotChosen]:
        """Each agent left out, with its reason."""
        return self.error.excluded or []


class Unauthorized(LadderError):
    """401: no token, or a token the server does not know."""


class Forbidden(LadderError):
    """403: the token's role may not do this (or an agent acting as another)."""


class NotFound(LadderError):
    """404: no such agent, profile, deliberation or judgment."""


class Conflict(LadderError):
    """409: the same contract or deliberation id with another payload, or a heartbeat
    contradicting the server's configuration."""


class RetryLater(LadderError):
    """The server asked to come back later; ``retry_after``: its last hint, in seconds."""

    def __init__(
        self, status: int | None, error: ErrorBody, retry_after: float | None = None
    ) -> None:
        super().__init__(status, error)
        self.retry_after = retry_after


class RateLimited(RetryLater):
    """429, after the retries."""


class Unavailable(RetryLater):
    """503 after the retries (the store out of reach, the instance busy), or no answer
    (the connection failed or timed out)."""


class ServerError(LadderError):
    """Any other status (a 500), or an answer that is not in the API's shape."""


class AnswerTooLarge(ServerError):
    """An answer larger than the client's ``max_answer_bytes``: refused unread (its
    announced size, or as soon as more than the cap came); the message names both."""


_BY_STATUS: dict[int, type[LadderError]] = {
    400: InvalidInput, 401: Unauthorized, 403: Forbidden, 404: NotFound, 409: Conflict,
    413: InvalidInput, 415: InvalidInput, 422: InvalidInput,
}  # fmt: skip


def retry_after(response: httpx.Response) -> float | None:
    """The ``Retry-After`` header in seconds (a number of seconds; a date is ignored)."""
    header = response.headers.get("Retry-After")
    try:
        return None if header is None else max(0.0, float(header))
    except ValueError:
        return None


def error_for(response: httpx.Response, content: bytes | None = None) -> LadderError:
    """The exception for an error answer of the API; ``content``: what was read of its
    body (the client reads an error's first ``max_error_bytes``), else the whole."""
    body = response.content if content is None else content
    try:
        error = ErrorOut.model_validate_json(body, extra="ignore").error
    except ValidationError:
        shown = body[:800].decode("utf-8", errors="replace")
        text = shown.strip().replace("\n", " ")[:200] or response.reason_phrase
        error = ErrorBody(code="unexpected_answer", message=text)
    status = response.status_code
    if status == 400 and error.code == "too_few_agents":
        return TooFewAgents(status, error)
    if status == 429:
        return RateLimited(status, error, retry_after(response))
    if status == 503:
        return Unavailable(status, error, retry_after(response))
    return _BY_STATUS.get(status, ServerError)(status, error)
