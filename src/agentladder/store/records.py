"""The values the stores keep, beside the domain models they wrap.

A store never computes a rule: services fold values with ``agentladder.domain`` and hand
the results to the store, which keeps them atomically and returns them as they were.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from agentladder.domain.agents import AgentConfig
from agentladder.domain.levels import Level
from agentladder.domain.profile import AgentProfile
from agentladder.domain.xp import XPLine

__all__ = [
    "DeliberationDoc",
    "DirectoryQuery",
    "DirectorySort",
    "LeaderboardRow",
    "OracleApplied",
    "OracleCommit",
    "OracleEvent",
    "OracleEventKind",
    "OracleFold",
    "Registration",
    "Versioned",
    "took_part",
]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Versioned(Generic[T]):
    """A stored value with the revision a compare-and-set must name to replace it."""

    value: T
    revision: int


class OracleEventKind(StrEnum):
    """What changed an Oracle profile."""

    JUDGMENT = "judgment"
    RAW_AWARD = "raw_award"
    VALIDATION = "validation"
    SETTLE = "settle"
    MODEL_CHANGE = "model_change"


class OracleEvent(BaseModel):
    """One applied Oracle event: its input, its result and the ledger lines it wrote.

    ``key`` makes the event idempotent per agent: a judgment's contract_id, a
    validation's ``validation:<contract_id>``, a raw award's event id. ``payload`` is the
    input as given (what replay folds), ``result`` the response returned to the caller
    (returned again, unchanged, for a duplicate).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent_id: str
    key: str
    kind: OracleEventKind
    payload: dict[str, Any]
    payload_hash: str
    result: dict[str, Any]
    lines: tuple[XPLine, ...] = ()
    at: str
    seq: int = Field(default=0, description="per-agent order, 1-based; set by the store")


class OracleCommit(BaseModel):
    """One atomic Oracle write: an event, the profile after it, and its ledger lines."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    event: OracleEvent
    profile: AgentProfile


OracleFold = Callable[[AgentProfile | None], OracleCommit | None]
"""Builds the commit of one Oracle event from the agent's current profile (None: new
agent), or returns None when there is nothing to write. Pure: it may run more than once."""


@dataclass(frozen=True, slots=True)
class OracleApplied:
    """The event stored under a key, the agent's profile after it, and whether it is new."""

    event: OracleEvent
    profile: AgentProfile
    created: bool


class LeaderboardRow(BaseModel):
    """One row of a leaderboard, overall or for one task type."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    position: int
    agent_id: str
    provider: str
    model: str
    xp: int
    level: Level
    tasks: int
    average_score: float
    task_type: str | None = None
    specialization_xp: int | None = None
    specialization_level: Level | None = None
    specialization_tasks: int | None = None
    specialization_avg_score: float | None = None
    specialization_best_score: float | None = None


class Registration(BaseModel):
    """An agent known to the registry: its declared fields and when it was heard from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    config: AgentConfig
    first_seen: float
    last_seen: float
    remote: bool = False

    @property
    def agent_id(self) -> str:
        """The agent's id: its configured name."""
        return self.config.name


OPEN_STATUSES = frozenset({"queued", "running", "settling"})
"""The stored statuses of a deliberation not yet done with (queued, running, or finished
with side effects pending), which recovery looks for; the NATS store keeps these records
apart (``store/nats/record_views.py``) so that finding them does not read every record."""


class DeliberationDoc(BaseModel):
    """A deliberation record as stored: indexed fields plus the orchestrator's document."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    status: str
    created_at: float
    body: dict[str, Any] = Field(default_factory=dict)


def took_part(doc: DeliberationDoc, agent: str | None) -> bool:
    """Whether ``agent`` is one of the agents of the deliberation ``doc`` (always, for
    None): the stores' ``list_deliberations(agent=...)``."""
    if agent is None:
        return True
    agents = doc.body.get("agents")
    return isinstance(agents, list) and agent in agents


def registration_matches(registration: Registration, tag: str | None, provider: str | None) -> bool:
    """Whether ``registration`` declares capability ``tag`` and is of ``provider`` (each
    when given): the directory's filters, applied by the stores."""
    config = registration.config
    return (tag is None or tag in config.capability_tags) and (
        provider is None or config.provider_id == provider
    )


DirectorySort = Literal["name", "rank", "avg_score", "cost"]


@dataclass(frozen=True, slots=True)
class DirectoryQuery:
    """What ``GET /agents/directory`` shows (its query parameters; ``store/directory.py``)."""

    tag: str | None = None
    provider: str | None = None
    min_rank: int = 0
    online: bool | None = None
    sort: DirectorySort = "name"
    limit: int | None = None
    offset: int = 0
