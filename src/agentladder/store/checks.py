"""The gateway's pending checks: what a decided check needs to run, kept in the store from
the moment the answer goes until its judgment and verdict are stored (docs/gateway.md,
"Checks"), so that a check survives a crash of the instance that decided it.

``PendingCheck`` holds what the judge is shown (the conversation's last characters, the
answer's first), the instance that runs it (``owner``), its failed attempts and when it
may run again. ``CheckStore`` is its small storage interface, keyed by contract id, with
revisions: ``put_check`` creates (revision 0) or replaces compare-and-set, so that two
instances taking over the same abandoned check cannot both take it. Every store (memory,
SQLite, NATS) implements it; ``MemoryChecks`` is the in-memory one.
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from agentladder.domain.agents import AgentName
from agentladder.errors import RevisionConflict
from agentladder.store.records import Versioned

__all__ = ["CheckStore", "MemoryChecks", "PendingCheck"]


class PendingCheck(BaseModel):
    """One decided check, not yet judged and recorded."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    contract_id: str = Field(min_length=1, max_length=256)
    agent_id: AgentName
    task_type: str = Field(min_length=1, max_length=64)
    conversation: str = Field(description="the conversation as the judge is shown it")
    answer: str = Field(description="the answer as the judge is shown it")
    at: float = Field(description="when the answer was given, seconds since the epoch")
    owner: str = Field(min_length=1, max_length=128, description="the instance that runs it")
    attempts: int = Field(default=0, ge=0, description="failed attempts so far")
    due: float = Field(default=0.0, description="when it may run again (seconds since the epoch)")
    error: str = Field(default="", max_length=1000, description="why the last attempt failed")
    score: float | None = Field(default=None, ge=0.0, le=10.0, description="the judge's, once")
    reason: str | None = Field(default=None, max_length=1000)


class CheckStore(Protocol):
    """The pending checks, by contract id."""

    async def put_check(self, check: PendingCheck, revision: int) -> int:
        """Store ``check``: revision 0 creates it (``RevisionConflict`` when it exists),
        another replaces the stored one only at that revision (else ``RevisionConflict``).
        The new revision."""

    async def list_checks(self, limit: int) -> list[Versioned[PendingCheck]]:
        """Up to ``limit`` pending checks, the earliest answered first."""

    async def delete_check(self, contract_id: str) -> None:
        """Forget the check (done or given up); nothing when absent."""


class MemoryChecks:
    """``CheckStore`` in a dictionary (lost with the process)."""

    def __init__(self) -> None:
        self._checks: dict[str, Versioned[PendingCheck]] = {}
        self._check_revision = 0

    async def put_check(self, check: PendingCheck, revision: int) -> int:
        """Create or compare-and-set."""
        found = self._checks.get(check.contract_id)
        if (found.revision if found is not None else 0) != revision:
            raise RevisionConflict(f"checks/{check.contract_id}", revision)
        self._check_revision += 1
        self._checks[check.contract_id] = Versioned(check, self._check_revision)
        return self._check_revision

    async def list_checks(self, limit: int) -> list[Versioned[PendingCheck]]:
        """The earliest answered first."""
        return sorted(self._checks.values(), key=_earliest)[:limit]

    async def delete_check(self, contract_id: str) -> None:
        """Forget it."""
        self._checks.pop(contract_id, None)


def _earliest(found: Versioned[PendingCheck]) -> Any:
    return (found.value.at, found.value.contract_id)
