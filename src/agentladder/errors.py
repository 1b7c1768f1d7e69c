"""The one exception tree of agentladder.

::

    AgentladderError
    ├── InvalidInput          bad input, one line: ``field: reason (value)`` (a ValueError)
    │   ├── UnknownAgent      an agent id nobody knows (a typo?), with the closest known ids
    │   ├── TooManyTaskTypes  a task type past a configured bound (per agent, per store)
    │   └── UnknownModel      a gateway ``model`` that is no agent, route or alias
    ├── NotFound              an agent, profile, deliberation or key that does not exist
    ├── Conflict              a write that disagrees with what is stored
    │   ├── RevisionConflict  a compare-and-set lost against a newer revision
    │   ├── AlreadyApplied    an idempotent write whose key was applied before (holds it)
    │   └── PayloadConflict   the same idempotency key with a different payload
    ├── Refused               an action the caller may not take (e.g. an agent self-promoting)
    ├── TooFewAgents          a deliberation with fewer than 2 qualified agents (holds why)
    │   └── NoAgentQualifies  no agent qualifies for a gateway request's routing (holds why)
    ├── Busy                  the instance takes no more deliberations now (retry later)
    │   └── SkillQueueFull    the skill queue holds its bound: a judgment refused (retry later)
    ├── ProviderError         asking an agent's model failed (timeout, HTTP, unparseable...)
    ├── AgentsFailed          every agent a gateway request was tried on failed (holds why)
    ├── BudgetExceeded        a gateway client spent its budget for the period (when it resets)
    ├── StoreError            the store failed or holds data it cannot read
    │   ├── StoreUnavailable  the store cannot be reached right now (retry later)
    │   └── CorruptRecord     a stored value cannot be decoded; names the key
    └── AddressInUse          the address a server is to listen on is taken (or not ours)

The API maps these to HTTP status codes in one place; the rules and services raise only
these (and pydantic's ``ValidationError`` for model validation, which is a ``ValueError``).
"""

from __future__ import annotations

from collections.abc import Sequence

from agentladder.domain.suggestions import did_you_mean
from agentladder.redaction import scrub

__all__ = [
    "AddressInUse",
    "AgentladderError",
    "AgentsFailed",
    "AlreadyApplied",
    "BudgetExceeded",
    "Busy",
    "Conflict",
    "CorruptRecord",
    "InvalidInput",
    "NoAgentQualifies",
    "NotFound",
    "PayloadConflict",
    "ProviderError",
    "Refused",
    "Rejected",
    "RequestRejected",
    "RevisionConflict",
    "SkillQueueFull",
    "StoreError",
    "StoreUnavailable",
    "TooFewAgents",
    "TooManyTaskTypes",
    "UnknownAgent",
    "UnknownModel",
    "shown_value",
]


def shown_value(value: object) -> str:
    """``repr(value)``, cut to 80 characters so that an error stays one line."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


class AgentladderError(Exception):
    """Base of every error agentladder raises on purpose."""


class InvalidInput(AgentladderError, ValueError):
    """A value was refused; ``field`` and ``value`` say which and what."""

    def __init__(self, field: str, value: object, reason: str) -> None:
        self.field = field
        self.value = value
        self.reason = reason
        super().__init__(f"{field}: {reason} ({shown_value(value)})")


class UnknownAgent(InvalidInput):
    """A judgment, an award or a deliberation (``field`` ``agent_names``) names an agent
    nobody configured, registered or judged before; ``suggestions``: the closest known ids."""

    def __init__(
        self, agent_id: str, suggestions: list[str], reason: str, field: str = "agent_id"
    ) -> None:
        self.suggestions = suggestions
        super().__init__(field, agent_id, reason)


class TooManyTaskTypes(InvalidInput):
    """A new task type past ``oracle.max_task_types_per_agent`` or ``max_task_types``;
    ``field`` is always ``task_type``."""

    def __init__(self, value: str, reason: str) -> None:
        super().__init__("task_type", value, reason)


class UnknownModel(InvalidInput):
    """A gateway request's ``model`` names no agent, ``route:`` form or alias."""

    def __init__(self, value: str, reason: str) -> None:
        super().__init__("model", value, reason)


class NotFound(AgentladderError, LookupError):
    """Something asked for by key does not exist; ``suggestions``: the closest keys that do
    (an agent id one letter off), offered in the message (``did you mean echo?``)."""

    def __init__(self, kind: str, key: str, suggestions: Sequence[str] = ()) -> None:
        self.kind = kind
        self.key = key
        self.suggestions = list(suggestions)
        hint = f"; {did_you_mean(self.suggestions)}" if self.suggestions else ""
        super().__init__(f"{kind} {key!r} not found{hint}")


class Conflict(AgentladderError):
    """A write disagrees with what is stored."""


class RevisionConflict(Conflict):
    """A compare-and-set found a newer revision than the one it was based on."""

    def __init__(self, key: str, expected: int | None, actual: int | None = None) -> None:
        self.key = key
        self.expected = expected
        self.actual = actual
        super().__init__(f"{key!r}: expected revision {expected}, found {actual}")


class AlreadyApplied(Conflict):
    """An idempotent write found its key applied before; ``existing`` is what was stored."""

    def __init__(self, key: str, existing: object = None) -> None:
        self.key = key
        self.existing = existing
        super().__init__(f"{key!r} was applied before")


class PayloadConflict(Conflict):
    """The same idempotency key was used again with a different payload."""

    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(f"{key!r} was already used with a different payload")


class Refused(AgentladderError):
    """The caller may not do this (for example an agent reporting its own rank)."""


class TooFewAgents(AgentladderError):
    """Fewer agents qualify than a deliberation (or a routing: ``what``) needs;
    ``excluded`` says who and why."""

    def __init__(
        self, qualified: list[str], excluded: list[dict[str, object]], needed: int = 2,
        what: str = "a deliberation",
    ) -> None:  # fmt: skip
        self.qualified = qualified
        self.excluded = excluded
        self.needed = needed
        agents = "agent" if needed == 1 else "agents"
        super().__init__(
            f"{what} needs at least {needed} qualified {agents}, {len(qualified)} qualify"
        )


class NoAgentQualifies(TooFewAgents):
    """No agent qualifies for a gateway request's ``model``; ``excluded`` says who and why."""

    def __init__(self, model: str, excluded: list[dict[str, object]]) -> None:
        super().__init__([], excluded, needed=1)
        self.model = model
        reasons = "; ".join(
            f"{e['agent_id']} ({e['reason']}): {e['detail']}" for e in excluded[:20]
        )
        more = f" (and {len(excluded) - 20} more)" if len(excluded) > 20 else ""
        self.args = (f"model {model!r}: no agent qualifies: {reasons or 'no agents'}{more}",)


class Busy(AgentladderError):
    """This instance holds as many deliberations as it may; ``retry_after_s`` is a hint."""

    def __init__(self, message: str, retry_after_s: float = 1.0) -> None:
        self.retry_after_s = retry_after_s
        super().__init__(message)


class SkillQueueFull(Busy):
    """The skill queue holds as much evidence as it may (``skill_queue_max_msgs`` or
    ``_max_bytes``): the judgment was refused before anything was stored."""


class ProviderError(AgentladderError):
    """A provider call failed; ``kind``: timeout, http, refused, unparseable, invalid,
    limit (a gateway stream passed a bound of its backend) or rejected (``Rejected``).
    ``retryable`` false: asking again cannot help (an API key variable that is not set)."""

    def __init__(
        self, kind: str, message: str, retry_after_s: float | None = None, *,
        retryable: bool = True,
    ) -> None:  # fmt: skip
        self.kind = kind
        self.retry_after_s = retry_after_s  # a provider's Retry-After, in seconds
        self.retryable = retryable
        super().__init__(f"{kind}: {scrub(message)}")  # no secret leaves (redaction.py)


class Rejected(ProviderError):
    """A provider refused a gateway request as invalid (400, 413 or 422): the request's
    fault as that provider sees it, not the agent's. ``status``, and ``detail``: the
    provider's OpenAI-style error object when it sent one (``message``, ``type``, ``param``,
    ``code``), else empty."""

    def __init__(self, status: int, message: str, detail: dict[str, object]) -> None:
        self.status = status
        self.detail = {k: scrub(v) if isinstance(v, str) else v for k, v in detail.items()}
        super().__init__("rejected", message, retryable=False)


class RequestRejected(AgentladderError):
    """Every agent a gateway request was asked of refused it as invalid (``Rejected``):
    the caller's to fix. ``last``: the last refusal, whose status and error code the caller
    gets; ``attempts``: (agent, why), the agents not asked (Retry-After) included."""

    def __init__(self, model: str, attempts: list[tuple[str, str]], last: Rejected) -> None:
        self.model = model
        self.attempts = attempts
        self.last = last
        tried = "; ".join(f"{agent}: {why}" for agent, why in attempts)
        super().__init__(scrub(f"model {model!r}: the request was refused as invalid: {tried}"))


class AgentsFailed(AgentladderError):
    """Every agent a gateway request was tried on failed; ``attempts``: (agent, why);
    ``retry_after_s``: the soonest one of them may be asked again (None: not known)."""

    def __init__(
        self, model: str, attempts: list[tuple[str, str]], retry_after_s: int | None = None
    ) -> None:
        self.model = model
        self.attempts = attempts
        self.retry_after_s = retry_after_s
        tried = "; ".join(f"{agent}: {why}" for agent, why in attempts)
        super().__init__(
            scrub(f"model {model!r}: every agent tried failed ({len(attempts)} tried): {tried}")
        )


class BudgetExceeded(AgentladderError):
    """A gateway client's spend in its budget's period reached the limit; ``headers``:
    the budget's response headers, ``retry_after_s`` until the period resets (None: a
    ``total`` budget, which never does)."""

    def __init__(self, message: str, headers: dict[str, str], retry_after_s: int | None) -> None:
        self.headers = headers
        self.retry_after_s = retry_after_s
        super().__init__(message)


class StoreError(AgentladderError):
    """The store failed."""


class StoreUnavailable(StoreError):
    """The store cannot be reached right now; the operation may be retried."""


class CorruptRecord(StoreError):
    """A stored value cannot be decoded."""

    def __init__(self, key: str, reason: str) -> None:
        self.key = key
        self.reason = reason
        super().__init__(f"corrupt record at {key!r}: {reason}")


class AddressInUse(AgentladderError):
    """The address to listen on is taken by another process, or is not this machine's."""
