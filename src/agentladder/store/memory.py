"""The in-memory reference store: the contract's semantics with nothing to set up.

It ships with the package so that users' own tests need no server. Every method does its
work without awaiting in between, so under asyncio each call is atomic.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from itertools import islice

from agentladder.domain.budget import live_holds, refusal
from agentladder.domain.frozen import replaced
from agentladder.domain.profile import AgentProfile
from agentladder.domain.skill.state import AgentSkill, FleetSkill
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.errors import AlreadyApplied, RevisionConflict
from agentladder.store.base import (
    LEASE_KEPT_S,
    LedgerEntry,
    OracleApplied,
    OracleFold,
    OracleItem,
    SkillItem,
    StatsUpdate,
)
from agentladder.store.checks import MemoryChecks
from agentladder.store.directory import directory_from_reads
from agentladder.store.leaderboard import leaderboard_rows
from agentladder.store.listing import AgentListingCache, listing_from_reads
from agentladder.store.many import apply_each, oracle_many_then_skill, oracle_then_skill
from agentladder.store.records import (
    DeliberationDoc,
    DirectoryQuery,
    LeaderboardRow,
    OracleCommit,
    OracleEvent,
    Registration,
    Versioned,
    registration_matches,
    took_part,
)
from agentladder.store.served import ServedRequest
from agentladder.store.skillqueue import SkillQueue
from agentladder.store.skills import FitFold, SkillApplied, SkillEvent, SkillFold
from agentladder.store.spend import Hold, Reserved

__all__ = ["MemoryStore"]


class MemoryStore(MemoryChecks):
    """A ``Store`` kept in dictionaries; lost when the process ends."""

    def __init__(self) -> None:
        super().__init__()
        self._revision = 0
        self._stats: dict[str, Versioned[AgentPerformanceStats]] = {}
        self._markers: set[str] = set()
        self._profiles: dict[str, Versioned[AgentProfile]] = {}
        self._events: dict[str, list[OracleEvent]] = {}
        self._event_keys: dict[tuple[str, str], OracleEvent] = {}  # (agent, key): O(1) lookups
        self._ledger: dict[str, list[LedgerEntry]] = {}
        self._ledger_id = 0
        self._all_events: list[OracleEvent] = []  # every agent's, in the order stored
        self._all_ledger: list[LedgerEntry] = []  # by id: the id is the index plus one
        self._registrations: dict[str, Registration] = {}
        self._served: dict[str, ServedRequest] = {}
        self._deliberations: dict[str, DeliberationDoc] = {}
        self._leases: dict[str, float] = {}  # holder -> expires at
        self._spend: dict[tuple[str, str], int] = {}  # (client, period key) -> nano-dollars
        self._holds: dict[tuple[str, str], dict[str, tuple[int, float]]] = {}  # key -> id -> hold
        self._skill_log: list[SkillEvent] = []
        self._skill_keys: dict[str, SkillEvent] = {}
        self._skills: dict[str, AgentSkill] = {}
        self._fleet_skill = FleetSkill()
        self._listing = AgentListingCache()
        self._directory = AgentListingCache()  # the directory's objects, by agent

    @property
    def url(self) -> str:
        """Always ``memory://``."""
        return "memory://"

    async def close(self) -> None:
        """Nothing to release."""

    async def ping(self) -> None:
        """Always answers."""

    def _next_revision(self) -> int:
        self._revision += 1
        return self._revision

    async def get_stats(self, agent_id: str) -> Versioned[AgentPerformanceStats] | None:
        """One agent's stats."""
        return self._stats.get(agent_id)

    async def list_stats(self) -> dict[str, Versioned[AgentPerformanceStats]]:
        """Every agent's stats."""
        return dict(sorted(self._stats.items()))

    async def get_many_stats(
        self, agent_ids: Collection[str]
    ) -> dict[str, Versioned[AgentPerformanceStats]]:
        """The stats of those of ``agent_ids`` that have some."""
        return {a: self._stats[a] for a in agent_ids if a in self._stats}

    async def commit_stats(
        self, updates: Mapping[str, StatsUpdate], *, marker: str | None = None
    ) -> dict[str, int]:
        """Check every revision and the marker first, then write all."""
        if marker is not None and marker in self._markers:
            raise AlreadyApplied(marker)
        for agent_id, (_, expected) in updates.items():
            current = self._stats.get(agent_id)
            actual = 0 if current is None else current.revision
            if actual != expected:
                raise RevisionConflict(agent_id, expected, actual)
        revisions = {}
        for agent_id, (stats, _) in updates.items():
            revisions[agent_id] = self._next_revision()
            self._stats[agent_id] = Versioned(stats, revisions[agent_id])
        if marker is not None:
            self._markers.add(marker)
        return revisions

    async def marker_applied(self, marker: str) -> bool:
        """Whether the marker was committed."""
        return marker in self._markers

    async def get_profile(self, agent_id: str) -> Versioned[AgentProfile] | None:
        """One profile."""
        return self._profiles.get(agent_id)

    async def get_many_profiles(
        self, agent_ids: Collection[str]
    ) -> dict[str, Versioned[AgentProfile]]:
        """The profiles of those of ``agent_ids`` that have one."""
        return {a: self._profiles[a] for a in agent_ids if a in self._profiles}

    async def list_profiles(self) -> list[AgentProfile]:
        """Every profile by agent id."""
        return [v.value for _, v in sorted(self._profiles.items())]

    async def commit_oracle(self, commit: OracleCommit, expected_revision: int) -> int:
        """Append the event and its lines and replace the profile, or change nothing."""
        event = commit.event
        agent_events = self._events.setdefault(event.agent_id, [])
        stored = self._event_keys.get((event.agent_id, event.key))
        if stored is not None:
            raise AlreadyApplied(f"{event.agent_id}/{event.key}", stored)
        current = self._profiles.get(event.agent_id)
        actual = 0 if current is None else current.revision
        if actual != expected_revision:
            raise RevisionConflict(event.agent_id, expected_revision, actual)
        stored_event = replaced(event, seq=len(agent_events) + 1)
        agent_events.append(stored_event)
        self._event_keys[(event.agent_id, event.key)] = stored_event
        self._all_events.append(stored_event)
        lines = self._ledger.setdefault(event.agent_id, [])
        contract_id = str(event.payload.get("contract_id", event.key))
        for line in event.lines:
            self._ledger_id += 1
            entry = LedgerEntry(
                id=self._ledger_id,
                agent_id=event.agent_id,
                event=line.event,
                xp_awarded=line.xp,
                contract_id=contract_id,
                timestamp=event.at,
            )
            lines.append(entry)
            self._all_ledger.append(entry)
        revision = self._next_revision()
        self._profiles[event.agent_id] = Versioned(commit.profile, revision)
        return revision

    async def apply_oracle(self, agent_id: str, key: str, fold: OracleFold) -> OracleApplied | None:
        """Check, fold and commit without awaiting in between: atomic under asyncio."""
        stored = await self.get_event(agent_id, key)
        current = self._profiles.get(agent_id)
        if stored is not None and current is not None:
            return OracleApplied(stored, current.value, created=False)
        commit = fold(None if current is None else current.value)
        if commit is None:
            return None
        await self.commit_oracle(commit, 0 if current is None else current.revision)
        event = self._events[agent_id][-1]
        return OracleApplied(event, commit.profile, created=True)

    async def apply_oracle_many(self, items: Sequence[OracleItem]) -> list[OracleApplied | None]:
        """Each in turn (``store.many``)."""
        return await apply_each(self.apply_oracle, items)

    def skill_queue(self) -> SkillQueue | None:
        """None: skill evidence is applied on the judgment's request path
        (``store/skillqueue.py``)."""
        return None

    async def apply_oracle_then_skill(
        self, agent_id: str, key: str, fold: OracleFold, skill: SkillItem
    ) -> tuple[OracleApplied | None, SkillApplied | None]:
        """One after the other (``store.many``)."""
        return await oracle_then_skill(self, agent_id, key, fold, skill)

    async def apply_oracle_many_then_skill(
        self, pairs: Sequence[tuple[OracleItem, SkillItem]]
    ) -> list[tuple[OracleApplied | None, SkillApplied | None]]:
        """One after the other (``store.many``)."""
        return await oracle_many_then_skill(self, pairs)

    async def get_event(self, agent_id: str, key: str) -> OracleEvent | None:
        """The agent's event with this key."""
        return self._event_keys.get((agent_id, key))

    async def events(self, agent_id: str) -> list[OracleEvent]:
        """The agent's events in order."""
        return list(self._events.get(agent_id, []))

    async def ledger(
        self, agent_id: str, *, offset: int = 0, limit: int = 100
    ) -> list[LedgerEntry]:
        """A page of the agent's ledger."""
        return self._ledger.get(agent_id, [])[offset : offset + limit]

    async def events_after(
        self, after: int = 0, limit: int = 1000
    ) -> list[tuple[int, OracleEvent]]:
        """Positions are 1, 2, ... in the order stored."""
        start = max(after, 0)
        return list(enumerate(self._all_events[start : start + limit], start + 1))

    async def ledger_after(self, after: int = 0, limit: int = 1000) -> list[LedgerEntry]:
        """Ids are 1, 2, ... in the order written."""
        start = max(after, 0)
        return self._all_ledger[start : start + limit]

    async def leaderboard(self, task_type: str | None, limit: int) -> list[LeaderboardRow]:
        """Sorted in Python from every profile."""
        return leaderboard_rows((v.value for v in self._profiles.values()), task_type, limit)

    async def task_types(self) -> frozenset[str]:
        """From every profile."""
        return frozenset(t for v in self._profiles.values() for t in v.value.specializations)

    async def apply_skill(self, key: str, agents: Sequence[str], fold: SkillFold) -> SkillApplied:
        """Fold and commit without awaiting in between: atomic under asyncio."""
        stored = self._skill_keys.get(key)
        if stored is not None:
            return SkillApplied(stored, created=False)
        current = {a: self._skills[a] for a in agents if a in self._skills}
        commit = fold(current, self._fleet_skill)
        event = replaced(commit.event, seq=len(self._skill_log) + 1)
        self._skill_log.append(event)
        self._skill_keys[key] = event
        self._skills.update(commit.agents)
        if commit.fleet is not None:
            self._fleet_skill = commit.fleet
        return SkillApplied(event, created=True)

    async def apply_skill_many(
        self, items: Sequence[SkillItem], *, fresh: bool = False
    ) -> list[SkillApplied]:
        """Each in turn (``fresh`` changes nothing: a key is looked up in a dict)."""
        return [await self.apply_skill(key, agents, fold) for key, agents, fold in items]

    async def commit_skill_fit(self, seq: int, fold: FitFold) -> None:
        """In one step, without awaiting."""
        commit = fold(self._skill_log[max(0, seq) :])
        self._skills = dict(commit.agents)
        self._fleet_skill = commit.fleet

    async def get_skills(self, agent_ids: Collection[str]) -> dict[str, AgentSkill]:
        """From the dictionary."""
        return {a: self._skills[a] for a in dict.fromkeys(agent_ids) if a in self._skills}

    async def list_skills(self) -> list[AgentSkill]:
        """By agent id."""
        return [self._skills[a] for a in sorted(self._skills)]

    async def get_fleet_skill(self) -> FleetSkill:
        """As last committed."""
        return self._fleet_skill

    async def get_skill_event(self, key: str) -> SkillEvent | None:
        """By key."""
        return self._skill_keys.get(key)

    async def get_skill_events(self, keys: Collection[str]) -> dict[str, SkillEvent]:
        """By key."""
        return {key: self._skill_keys[key] for key in keys if key in self._skill_keys}

    async def skill_events(self, *, after: int = 0, limit: int = 1000) -> list[SkillEvent]:
        """A slice of the log (seq n is at index n - 1)."""
        return self._skill_log[max(0, after) : max(0, after) + limit]

    async def count_skill_events(self, *, after: int = 0) -> int:
        """The log's length past ``after`` (seqs are 1, 2, ...: an event's index plus one)."""
        return max(0, len(self._skill_log) - max(0, after))

    async def put_registration(self, registration: Registration) -> None:
        """Insert or replace."""
        self._registrations[registration.agent_id] = registration

    async def get_registration(self, agent_id: str) -> Registration | None:
        """One registration."""
        return self._registrations.get(agent_id)

    async def get_many_registrations(self, agent_ids: Collection[str]) -> dict[str, Registration]:
        """The registrations of those of ``agent_ids`` that have one."""
        return {a: self._registrations[a] for a in agent_ids if a in self._registrations}

    async def list_registrations(
        self, *, tag: str | None = None, provider: str | None = None
    ) -> list[Registration]:
        """By agent id."""
        return [
            r
            for _, r in sorted(self._registrations.items())
            if registration_matches(r, tag, provider)
        ]

    async def agent_listing_json(self, now: float, online_window_s: float) -> bytes:
        """Built from the registrations and stats (``store.listing.listing_from_reads``)."""
        return await listing_from_reads(self, self._listing, now, online_window_s)

    async def agent_directory_json(
        self, now: float, online_window_s: float, query: DirectoryQuery
    ) -> bytes:
        """Built from the reads (``store.directory.directory_from_reads``)."""
        return await directory_from_reads(self, self._directory, now, online_window_s, query)

    async def put_deliberation(self, doc: DeliberationDoc) -> None:
        """Insert or replace."""
        self._deliberations[doc.id] = doc

    async def get_deliberation(self, deliberation_id: str) -> DeliberationDoc | None:
        """One record."""
        return self._deliberations.get(deliberation_id)

    async def list_deliberations(
        self,
        *,
        limit: int = 50,
        offset: int = 0,
        statuses: Collection[str] | None = None,
        agent: str | None = None,
    ) -> Sequence[DeliberationDoc]:
        """Newest first."""
        docs = sorted(
            (
                d
                for d in self._deliberations.values()
                if (statuses is None or d.status in statuses) and took_part(d, agent)
            ),
            key=lambda d: (-d.created_at, d.id),
        )
        return docs[offset : offset + limit]

    async def deliberations_after(
        self, after: int = 0, limit: int = 100
    ) -> list[tuple[int, DeliberationDoc]]:
        """Positions 1, 2, ... in the order created (a replaced record keeps its place)."""
        start = max(after, 0)
        docs = islice(self._deliberations.values(), start, start + limit)
        return list(enumerate(docs, start + 1))

    async def renew_lease(self, holder: str, expires_at: float) -> None:
        """Insert or extend; forget leases that ended an hour before."""
        self._leases[holder] = expires_at
        forget = expires_at - LEASE_KEPT_S
        for stale in [h for h, ends in self._leases.items() if ends < forget]:
            del self._leases[stale]

    async def drop_lease(self, holder: str) -> None:
        """End it now."""
        self._leases.pop(holder, None)

    async def live_leases(self, now: float) -> frozenset[str]:
        """Those running past ``now``."""
        return frozenset(h for h, expires_at in self._leases.items() if expires_at > now)

    async def put_served(self, records: Sequence[ServedRequest], keep_s: float) -> None:
        """Keep them; those older than ``keep_s`` before the newest are forgotten."""
        for record in records:
            self._served[record.contract_id] = record
        if records:
            horizon = max(r.at for r in records) - keep_s
            old = [c for c, r in self._served.items() if r.at < horizon]
            for contract_id in old:
                del self._served[contract_id]

    async def get_served(self, contract_id: str) -> ServedRequest | None:
        """One record."""
        return self._served.get(contract_id)

    async def find_served(self, ids: Collection[str]) -> dict[str, ServedRequest]:
        """By contract id, else the newest record asked with that request id (one pass
        over the records for all of those)."""
        wanted = set(ids)
        found = {one: self._served[one] for one in wanted if one in self._served}
        left = wanted - found.keys()
        if left:
            for record in self._served.values():
                asked = record.request_id
                if asked is None or asked not in left:
                    continue
                if asked not in found or found[asked].at < record.at:
                    found[asked] = record
        return found

    async def list_served(self, since: float, limit: int) -> list[ServedRequest]:
        """Newest first."""
        found = [r for r in self._served.values() if r.at >= since]
        found.sort(key=lambda r: (-r.at, r.contract_id))
        return found[: max(0, limit)]

    async def add_spend(self, charges: Mapping[tuple[str, str], int]) -> None:
        """Add to each key."""
        for key, nano in charges.items():
            self._spend[key] = self._spend.get(key, 0) + nano

    async def get_spend(self, keys: Collection[tuple[str, str]]) -> dict[tuple[str, str], int]:
        """The keys that have a value."""
        return {key: self._spend[key] for key in keys if key in self._spend}

    async def reserve_spend(self, hold: Hold, limit_usd: float, now: float) -> Reserved:
        """Decided and added with no await in between: atomic in this process."""
        holds = live_holds(self._holds.get(hold.key, {}), now)
        spent, held = self._spend.get(hold.key, 0), sum(nano for nano, _ in holds.values())
        refused = refusal(spent, held, hold.nano, limit_usd)
        if refused is None:
            holds[hold.id] = (hold.nano, hold.expires_at)
        self._holds[hold.key] = holds
        return Reserved(refused, spent, held)

    async def settle_spend(self, hold: Hold, charges: Mapping[tuple[str, str], int]) -> None:
        """Add the charges, drop the hold."""
        await self.add_spend(charges)
        await self.release_spend(hold)

    async def release_spend(self, hold: Hold) -> None:
        """Drop the hold."""
        self._holds.get(hold.key, {}).pop(hold.id, None)
