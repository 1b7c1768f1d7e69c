"""The one storage contract every backend implements: memory, SQLite and NATS.

Revisions are part of the interface. Every write of a versioned value names the revision
it was computed from (0: the key must not exist yet) and fails with ``RevisionConflict``
when another writer got there first; ``agentladder.store.retry`` retries in one place.
Writes that must happen once carry an idempotency key and fail with ``AlreadyApplied``
(holding what was stored) when repeated. Every multi-value write is atomic: all or nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from typing import Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

from agentladder.domain.profile import AgentProfile
from agentladder.domain.skill.state import AgentSkill, FleetSkill
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.store.checks import CheckStore
from agentladder.store.records import (
    DeliberationDoc,
    DirectoryQuery,
    LeaderboardRow,
    OracleApplied,
    OracleCommit,
    OracleEvent,
    OracleFold,
    Registration,
    Versioned,
)
from agentladder.store.served import ServedRequest
from agentladder.store.skillqueue import SkillQueue
from agentladder.store.skills import FitFold, SkillApplied, SkillEvent, SkillFold
from agentladder.store.spend import SpendStore

__all__ = [
    "LEASE_KEPT_S",
    "LedgerEntry",
    "OracleApplied",
    "OracleFold",
    "OracleItem",
    "SkillItem",
    "StatsUpdate",
    "Store",
    "each_found",
]

T = TypeVar("T")
LEASE_KEPT_S = 3600.0
"""How long an ended lease is kept: a renewal forgets those that ended longer before."""

StatsUpdate = tuple[AgentPerformanceStats, int]
"""New stats and the revision they were computed from (0: the agent has none yet)."""


OracleItem = tuple[str, str, OracleFold]
"""One event of ``apply_oracle_many``: the agent, the idempotency key and the fold."""

SkillItem = tuple[str, Sequence[str], SkillFold]
"""One event of ``apply_skill_many``: the key, the agents it touches and the fold."""


class LedgerEntry(BaseModel):
    """One line of the xp_history ledger."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: int
    agent_id: str
    event: str
    xp_awarded: int
    contract_id: str
    timestamp: str


class Store(SpendStore, CheckStore, Protocol):
    """Everything agentladder persists (the clients' spend: ``store/spend.py``; the
    gateway's pending checks: ``store/checks.py``)."""

    @property
    def url(self) -> str:
        """Where this store keeps its data (credentials left out)."""

    async def close(self) -> None:
        """Release connections; the store cannot be used afterwards."""

    async def ping(self) -> None:
        """Return when the store answers; raise ``StoreUnavailable`` when it does not."""

    # Rank stats, key agent_id, value the specification's AgentPerformanceStats.
    async def get_stats(self, agent_id: str) -> Versioned[AgentPerformanceStats] | None:
        """One agent's stats, or None when it has none."""

    async def list_stats(self) -> dict[str, Versioned[AgentPerformanceStats]]:
        """Every agent's stats."""

    async def get_many_stats(
        self, agent_ids: Collection[str]
    ) -> dict[str, Versioned[AgentPerformanceStats]]:
        """The stats of each of ``agent_ids`` that has some (the others are left out):
        ``get_stats`` for several agents in one read."""

    async def commit_stats(
        self, updates: Mapping[str, StatsUpdate], *, marker: str | None = None
    ) -> dict[str, int]:
        """Write several agents' stats at once, each compare-and-set on its revision.

        With ``marker`` (a deliberation id), the write happens once: a second commit with
        the same marker raises ``AlreadyApplied``. Returns the new revisions.
        """

    async def marker_applied(self, marker: str) -> bool:
        """Whether a ``commit_stats`` with this marker was applied."""

    # The Oracle: profiles, the event log (idempotency and replay) and the ledger.
    async def get_profile(self, agent_id: str) -> Versioned[AgentProfile] | None:
        """One agent's Oracle profile, or None when it was never judged."""

    async def get_many_profiles(
        self, agent_ids: Collection[str]
    ) -> dict[str, Versioned[AgentProfile]]:
        """The profile of each of ``agent_ids`` that was judged (the others are left out):
        ``get_profile`` for several agents in one read."""

    async def list_profiles(self) -> list[AgentProfile]:
        """Every profile, ordered by agent id."""

    async def commit_oracle(self, commit: OracleCommit, expected_revision: int) -> int:
        """Atomically append the event and its ledger lines and replace the profile.

        Raises ``AlreadyApplied`` (with the stored event) when the agent already has an
        event with the same key, ``RevisionConflict`` when the profile's revision is not
        ``expected_revision``. Returns the profile's new revision.
        """

    async def apply_oracle(self, agent_id: str, key: str, fold: OracleFold) -> OracleApplied | None:
        """Apply the event ``fold`` builds, once per (agent_id, key), atomically.

        When the agent already has an event with ``key``, returns it with the agent's
        current profile (``created=False``) without calling ``fold``. Otherwise folds the
        current profile and commits the result, retrying on conflict, and returns it
        (``created=True``); ``None`` when ``fold`` had nothing to write.
        """

    async def apply_oracle_many(self, items: Sequence[OracleItem]) -> list[OracleApplied | None]:
        """``apply_oracle`` for each item, in order, each its own event with its own
        ledger lines and key (a key given twice: the later one finds the first). The
        outcomes in the order of ``items``. SQLite applies them in one transaction (all or
        none on a failure); NATS keeps several agents' events in flight at once."""

    def skill_queue(self) -> SkillQueue | None:
        """The queue a judgment's skill evidence goes through, applied by the leased
        appliers (``store/skillqueue.py``); None when it is applied on the request path
        (memory, SQLite, NATS without ``skill_queue=on``)."""

    async def apply_oracle_then_skill(
        self, agent_id: str, key: str, fold: OracleFold, skill: SkillItem
    ) -> tuple[OracleApplied | None, SkillApplied | None]:
        """``apply_oracle``, then ``apply_skill`` of ``skill`` when the event was created
        (None for the skill otherwise): a judgment and its skill evidence. SQLite writes
        both in one job of the writer (one transaction: both or neither); memory and NATS
        one after the other (``store.many.oracle_then_skill``)."""

    async def apply_oracle_many_then_skill(
        self, pairs: Sequence[tuple[OracleItem, SkillItem]]
    ) -> list[tuple[OracleApplied | None, SkillApplied | None]]:
        """``apply_oracle_then_skill`` for each pair, in order (a batch of judgments and
        their skill evidence). SQLite writes them all in one job of the writer (one
        transaction: all or nothing); memory and NATS ``apply_oracle_many``, then
        ``apply_skill_many`` of the created events' items (``store.many``)."""

    async def get_event(self, agent_id: str, key: str) -> OracleEvent | None:
        """The applied event of ``agent_id`` with idempotency ``key``, if any."""

    async def events(self, agent_id: str) -> list[OracleEvent]:
        """One agent's events in the order they were applied."""

    async def ledger(
        self, agent_id: str, *, offset: int = 0, limit: int = 100
    ) -> list[LedgerEntry]:
        """One agent's xp_history lines, oldest first."""

    async def events_after(
        self, after: int = 0, limit: int = 1000
    ) -> list[tuple[int, OracleEvent]]:
        """Up to ``limit`` Oracle events of every agent stored after position ``after`` (0:
        from the first), in the order stored, each with its position: the ``after`` of the
        next page. Pages of a reading that holds one page at a time (``agentladder export``)."""

    async def ledger_after(self, after: int = 0, limit: int = 1000) -> list[LedgerEntry]:
        """Up to ``limit`` xp_history lines of every agent with ``id`` above ``after``, by id."""

    async def leaderboard(self, task_type: str | None, limit: int) -> list[LeaderboardRow]:
        """Top profiles by XP (ties: higher average score, then agent id), overall or per type."""

    async def task_types(self) -> frozenset[str]:
        """Every task type some agent was judged in (a specialization of some profile)."""

    # The registry.
    async def apply_skill(self, key: str, agents: Sequence[str], fold: SkillFold) -> SkillApplied:
        """Append the skill event ``fold`` builds and write the states it changes, all at
        once and once per ``key`` (``store.skills``). ``fold`` gets the current states of
        ``agents`` (those that have one) and the fleet's; a repeated key returns the
        stored event without calling it."""

    async def apply_skill_many(
        self, items: Sequence[SkillItem], *, fresh: bool = False
    ) -> list[SkillApplied]:
        """``apply_skill`` for each item, in order, each its own event in the log (SQLite:
        in one transaction; NATS: in few atomic batches). ``fresh``: the keys are most
        likely new (the skill queue's appliers): NATS takes them as new at a chunk's first
        attempt, without looking them up (a key applied before makes that attempt fail,
        and its retry looks every key up); memory and SQLite ignore it."""

    async def commit_skill_fit(self, seq: int, fold: FitFold) -> None:
        """Replace every skill state and the fleet's with what ``fold`` builds from a fit of
        the log up to ``seq``, in one unit with the events appended after ``seq`` (which
        ``fold`` gets, in order, to fold onto the fit's states): nothing applied meanwhile
        is lost."""

    async def get_skills(self, agent_ids: Collection[str]) -> dict[str, AgentSkill]:
        """The skill state of each of ``agent_ids`` that has one."""

    async def list_skills(self) -> list[AgentSkill]:
        """Every agent's skill state, ordered by agent id."""

    async def get_fleet_skill(self) -> FleetSkill:
        """The fleet's skill state (empty before the first deliberation's evidence)."""

    async def get_skill_event(self, key: str) -> SkillEvent | None:
        """The skill event applied under ``key``, if any."""

    async def get_skill_events(self, keys: Collection[str]) -> dict[str, SkillEvent]:
        """The skill event of each of ``keys`` that has one (the others are left out):
        ``get_skill_event`` for several keys in one read (SQLite: on a reader thread;
        NATS: a bounded number of gets in flight at once)."""

    async def skill_events(self, *, after: int = 0, limit: int = 1000) -> list[SkillEvent]:
        """Up to ``limit`` skill events with ``seq`` above ``after``, in ``seq`` order."""

    async def count_skill_events(self, *, after: int = 0) -> int:
        """How many skill events have a ``seq`` above ``after`` (after the last fit's:
        the evidence that awaits the next fit), counted without reading them: memory
        from its list, SQLite by an index range, NATS by the server (a consumer's count
        of pending messages)."""

    async def put_registration(self, registration: Registration) -> None:
        """Insert or replace an agent's registration."""

    async def get_registration(self, agent_id: str) -> Registration | None:
        """One registration, or None."""

    async def get_many_registrations(self, agent_ids: Collection[str]) -> dict[str, Registration]:
        """The registration of each of ``agent_ids`` that has one (the others are left out):
        ``get_registration`` for several agents in one read."""

    async def list_registrations(
        self, *, tag: str | None = None, provider: str | None = None
    ) -> list[Registration]:
        """Every registration, ordered by agent id; only those declaring capability ``tag``
        and of ``provider`` (its provider_id) when given."""

    async def agent_listing_json(self, now: float, online_window_s: float) -> bytes:
        """``{"agents":[...]}``: every registered agent's JSON object as ``GET /agents``
        answers it, by agent id, read from the current registrations and rank stats (see
        ``store.listing``); an agent is online while ``now - last_seen < online_window_s``."""

    async def agent_directory_json(
        self, now: float, online_window_s: float, query: DirectoryQuery
    ) -> bytes:
        """``{"agents":[...]}``: the objects of ``agent_listing_json`` for the agents
        ``query`` selects, in its order and page (``store.directory``)."""

    # Deliberation records.
    async def put_deliberation(self, doc: DeliberationDoc) -> None:
        """Insert or replace a deliberation record."""

    async def get_deliberation(self, deliberation_id: str) -> DeliberationDoc | None:
        """One deliberation record, or None."""

    async def list_deliberations(
        self,
        *,
        limit: int = 50,
        offset: int = 0,
        statuses: Collection[str] | None = None,
        agent: str | None = None,
    ) -> Sequence[DeliberationDoc]:
        """Deliberation records, newest first; only those whose status is in ``statuses``,
        and with ``agent`` only those it took part in (its id in the body's ``agents``)."""

    async def deliberations_after(
        self, after: int = 0, limit: int = 100
    ) -> list[tuple[int, DeliberationDoc]]:
        """Up to ``limit`` deliberation records after position ``after`` (0: from the first),
        each with its position (the ``after`` of the next page). Memory and SQLite: in the
        order created; NATS: in the order last written (a record rewritten while pages are
        read comes again, newer, in a later page)."""

    # Instance leases: which service instances are alive (recovery, services/lease.py).
    async def renew_lease(self, holder: str, expires_at: float) -> None:
        """Insert or extend ``holder``'s lease until ``expires_at`` (seconds since the epoch);
        leases that ended more than ``LEASE_KEPT_S`` before ``expires_at`` are forgotten."""

    async def drop_lease(self, holder: str) -> None:
        """End ``holder``'s lease now (a clean stop); nothing if it has none."""

    async def live_leases(self, now: float) -> frozenset[str]:
        """The holders whose lease runs past ``now``."""

    # The gateway's answered requests (feedback finds the agent: store/served.py).
    async def put_served(self, records: Sequence[ServedRequest], keep_s: float) -> None:
        """Keep each record by its contract id (a repeat replaces it) for ``keep_s``
        seconds after its ``at``; records past that may be forgotten now."""

    async def get_served(self, contract_id: str) -> ServedRequest | None:
        """The record of ``contract_id``, unless unknown or forgotten."""

    async def find_served(self, ids: Collection[str]) -> dict[str, ServedRequest]:
        """The record each of ``ids`` names, by that id: a record's contract id, or the
        client request id it was asked with (``ServedRequest.request_id``; several asked
        with one id, a retry's: the newest); the ids unknown or forgotten are left out.
        An imported log's model calls find the answers they were (``importing/answers.py``)."""

    async def list_served(self, since: float, limit: int) -> list[ServedRequest]:
        """The records answered at ``since`` or later (their ``at``), newest first, at most
        ``limit`` of them: the newest ``limit`` when more were. Memory and SQLite read no
        more than that (SQLite: one range of the index on ``at``); NATS reads at most
        ``limit`` messages of the bucket's stream (``store/nats/served.py``)."""


async def each_found(
    keys: Iterable[str], get: Callable[[str], Awaitable[T | None]]
) -> dict[str, T]:
    """``get`` for each distinct key at once; the keys found, in the order given.

    The ``get_many_*`` reads of a backend without a batched read of its own.
    """
    wanted = list(dict.fromkeys(keys))
    found = await asyncio.gather(*(get(key) for key in wanted))
    return {key: value for key, value in zip(wanted, found, strict=True) if value is not None}
