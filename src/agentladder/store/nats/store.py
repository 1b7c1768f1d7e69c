"""The distributed store: NATS JetStream KV buckets and one stream (see docs/storage-nats.md).

``open_nats_store("nats://host:port[,host:port...]?replicas=1&rank_bucket=...&prefix=...")``

- rank stats: KV bucket ``<rank_bucket>`` (``ranks``), compare-and-set by revision
  (several agents in one atomic batch), published on ``<prefix>.ranks.updated.<agent_id>``;
- the Oracle: stream ``<PREFIX>_ORACLE`` (``oracle``), events applied once by
  compare-and-set plus idempotency claims; leaderboards from an in-memory index fed by it
  (``index``);
- registrations and deliberations: KV buckets ``<prefix>_registrations`` and
  ``<prefix>_deliberations`` (``records``);
- the service instances' leases: KV bucket ``<prefix>_leases`` (``leases``);
- the gateway clients' spend: KV bucket ``<prefix>_spend`` (``spend``);
- the gateway's pending checks: KV bucket ``<prefix>_checks`` (``checks``).

Several service instances on several machines can share one store: every write is a
compare-and-set or idempotent, checked by the server. An unreachable server, a timeout or
no responders raise ``StoreUnavailable``; other JetStream errors raise ``StoreError``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import TypeVar

import nats.errors
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.kv import KeyValue

from agentladder.domain.agents import validate_agent_name
from agentladder.domain.profile import AgentProfile
from agentladder.domain.skill.state import AgentSkill, FleetSkill
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.errors import StoreUnavailable
from agentladder.store.base import (
    LedgerEntry,
    OracleApplied,
    OracleFold,
    OracleItem,
    SkillItem,
    StatsUpdate,
    each_found,
)
from agentladder.store.checks import PendingCheck
from agentladder.store.codec import decode
from agentladder.store.directory import directory_from_reads
from agentladder.store.leaderboard import check_limit
from agentladder.store.listing import AgentListingCache, listing_from_reads
from agentladder.store.many import apply_in_flight, oracle_many_then_skill, oracle_then_skill
from agentladder.store.nats.changes import ChangeFeed
from agentladder.store.nats.checks import KvChecks
from agentladder.store.nats.config import (
    MARKER_PREFIX,
    NatsOptions,
    kv_key_ok,
    nats_errors,
    parse_nats_url,
)
from agentladder.store.nats.index import LeaderboardIndex
from agentladder.store.nats.io import (
    REQUEST_TIMEOUT,
    connect,
    ensure_kv,
    ensure_oracle_stream,
)
from agentladder.store.nats.leases import KvLeases
from agentladder.store.nats.mirror import KvMirror
from agentladder.store.nats.oracle import OracleLog
from agentladder.store.nats.ranks import RankStats
from agentladder.store.nats.records import KvDocuments
from agentladder.store.nats.served import KvServed
from agentladder.store.nats.skillfit import commit_fit
from agentladder.store.nats.skillqueue import EVIDENCE_HEADER, NatsSkillQueue, ensure_applier
from agentladder.store.nats.skills import SkillKv, chunks
from agentladder.store.nats.spend import KvSpend
from agentladder.store.records import (
    DeliberationDoc,
    DirectoryQuery,
    LeaderboardRow,
    OracleCommit,
    OracleEvent,
    Registration,
    Versioned,
    registration_matches,
)
from agentladder.store.retry import WriteTally, retry_on_conflict
from agentladder.store.served import ServedRequest
from agentladder.store.skillqueue import SkillQueue
from agentladder.store.skills import FitFold, SkillApplied, SkillEvent, SkillFold
from agentladder.store.spend import Hold, Reserved

__all__ = ["LEADERBOARD_WAIT", "NatsStore", "open_nats_store"]

log = logging.getLogger(__name__)

LEADERBOARD_WAIT = 5.0
"""How long a leaderboard query waits for the index to catch up before StoreUnavailable."""
MANY_GETS = 256
"""``get_skill_events``: the KV gets in flight at once (each is one request and reply)."""
T = TypeVar("T")


async def open_nats_store(url: str) -> NatsStore:
    """Connect, create or bind the buckets and the stream, start the leaderboard index and
    the rank and registration mirrors."""
    options = parse_nats_url(url)
    nc = await connect(options)
    try:
        with nats_errors("open"):
            js = nc.jetstream(timeout=REQUEST_TIMEOUT)
            await js.account_info()
            replicas = options.replicas
            ranks = await ensure_kv(js, options.rank_bucket, replicas, atomic=True)
            registrations = await ensure_kv(js, options.registrations_bucket, replicas)
            deliberations = await ensure_kv(js, options.deliberations_bucket, replicas)
            leases = await ensure_kv(js, options.leases_bucket, replicas)
            skills = await ensure_kv(js, options.skills_bucket, replicas, atomic=True)
            skill_kv = SkillKv(nc, js, skills, options.skills_bucket)
            await skill_kv.fence()
            await ensure_oracle_stream(js, options)
            appliers = None
            if options.skill_queue is not None:
                await ensure_applier(js, options)
                appliers = await ensure_kv(js, options.appliers_bucket, replicas)
            index = LeaderboardIndex(js, options.oracle_stream, options.event_prefix)
            await index.start()
            mirrors = (
                KvMirror(js, options.rank_bucket, skip=MARKER_PREFIX),
                KvMirror(js, options.registrations_bucket),
            )
            for mirror in mirrors:
                await mirror.start()
    except BaseException:
        await nc.close()
        raise
    docs = KvDocuments(
        js,
        registrations,
        deliberations,
        options.registrations_bucket,
        options.deliberations_bucket,
    )
    oracle = OracleLog(nc, js, options, index.head)
    skill_kv.repairs.start()  # events a writer that died left in states only
    return NatsStore(
        nc, js, options, RankStats(nc, js, ranks, options), oracle, docs, index,
        KvLeases(js, leases, options.leases_bucket),
        skill_kv, mirrors, appliers,
    )  # fmt: skip


class NatsStore:
    """A ``Store`` in NATS JetStream; open it with ``open_nats_store``."""

    def __init__(
        self,
        nc: Client,
        js: JetStreamContext,
        options: NatsOptions,
        ranks: RankStats,
        oracle: OracleLog,
        docs: KvDocuments,
        index: LeaderboardIndex,
        leases: KvLeases,
        skills: SkillKv,
        mirrors: tuple[KvMirror, KvMirror],
        appliers: KeyValue | None = None,
    ) -> None:
        self._nc = nc
        self._js = js
        self.options = options
        self._ranks = ranks
        self._oracle = oracle
        self._docs = docs
        self._index = index
        self._leases = leases
        self._skills = skills
        self._rank_mirror, self._registration_mirror = mirrors
        self._spend = KvSpend(js, options.spend_bucket, options.replicas)
        self._listing = AgentListingCache()
        self._directory = AgentListingCache()  # the directory's objects, by agent
        self._closed = False
        self.conflicts = WriteTally()  # its compare-and-set retries, for /metrics
        self._feed: ChangeFeed | None = None
        self._served = KvServed(js, options)
        self._checks = KvChecks(js, options.checks_bucket, options.replicas)
        self._queue = None
        if appliers is not None:  # skill_queue=on
            self._queue = NatsSkillQueue(nc, js, options, appliers, self.award)

    async def follow(
        self,
        agents: Callable[[Collection[str]], None],
        everything: Callable[[], None],
        registration: Callable[[Registration], None],
    ) -> None:
        """From now on, call ``agents`` with the agents each new write touches, whichever
        instance made it, ``registration`` with each registration stored, and
        ``everything`` after a skill fit (``changes.ChangeFeed``)."""
        if self._feed is None:
            self._feed = ChangeFeed(self._js, self.options)
        with self._guard("follow the streams"):
            await self._feed.start(agents, everything, registration)

    @property
    def url(self) -> str:
        """The servers and options, without credentials."""
        return self.options.url

    async def close(self) -> None:
        """Stop the index, flush pending publishes and close the connection."""
        if self._closed:
            return
        self._closed = True
        for follower in (self._index, self._rank_mirror, self._registration_mirror):
            with contextlib.suppress(nats.errors.Error, OSError):
                await follower.stop()
        await self._skills.repairs.stop()
        if self._queue is not None:
            await self._queue.close()
        if self._feed is not None:
            await self._feed.stop()
        try:
            await self._nc.drain()
        except (nats.errors.Error, OSError, RuntimeError) as error:  # includes TimeoutError
            # after a reconnect the client may hold a dead transport: close what is left
            # (nothing unacknowledged was promised to anyone)
            log.warning("NATS %s: drain failed at close (%r); closing", self.url, error)
            with contextlib.suppress(nats.errors.Error, OSError, RuntimeError):
                await self._nc.close()

    def _guard(self, what: str) -> contextlib.AbstractContextManager[None]:
        """``nats_errors``, failing at once (``StoreUnavailable``) while disconnected
        instead of waiting out a request timeout during a reconnect."""
        return nats_errors(what, self._nc)

    async def ping(self) -> None:
        """Ask JetStream for the account's info; fail at once while disconnected."""
        if not self._nc.is_connected:
            raise StoreUnavailable(f"NATS {self.url}: not connected (reconnecting or closed)")
        with self._guard("ping"):
            await self._js.account_info()

    async def get_stats(self, agent_id: str) -> Versioned[AgentPerformanceStats] | None:
        """One agent's stats from the rank bucket."""
        with self._guard("get_stats"):
            return await self._ranks.get(agent_id)

    async def list_stats(self) -> dict[str, Versioned[AgentPerformanceStats]]:
        """Every agent's stats (marker entries skipped)."""
        with self._guard("list_stats"):
            return await self._ranks.list_all()

    async def get_many_stats(
        self, agent_ids: Collection[str]
    ) -> dict[str, Versioned[AgentPerformanceStats]]:
        """The stats of those of ``agent_ids`` that have some: for several, from the bucket's
        mirror once it holds every entry written so far (``nats/mirror.py``: one request),
        else one KV get each, at once."""
        bucket = self.options.rank_bucket

        def stats(agent_id: str, seq: int, data: bytes) -> Versioned[AgentPerformanceStats]:
            value = decode(AgentPerformanceStats, data, f"{bucket}/{agent_id}")
            return Versioned(value, seq)

        wanted = [a for a in dict.fromkeys(agent_ids) if kv_key_ok(a) and not a.startswith("=")]
        return await self._mirrored(self._rank_mirror, wanted, self.get_stats, stats)

    async def _mirrored(
        self,
        mirror: KvMirror,
        wanted: list[str],
        one: Callable[[str], Awaitable[T | None]],
        decoded: Callable[[str, int, bytes], T],
    ) -> dict[str, T]:
        """The keys of ``wanted`` found, from ``mirror`` once it has caught up, else each
        by ``one``."""
        if len(wanted) < 2:
            return await each_found(wanted, one)
        with self._guard("mirror"):
            ready = await mirror.caught_up(LEADERBOARD_WAIT)
        if not ready:
            return await each_found(wanted, one)
        return {
            key: decoded(key, *entry) for key in wanted if (entry := mirror.get(key)) is not None
        }

    async def commit_stats(
        self, updates: Mapping[str, StatsUpdate], *, marker: str | None = None
    ) -> dict[str, int]:
        """One atomic batch of compare-and-set puts, plus the marker entry."""
        with self._guard("commit_stats"):
            return await self._ranks.commit(updates, marker)

    async def marker_applied(self, marker: str) -> bool:
        """Whether the marker entry exists."""
        with self._guard("marker_applied"):
            return await self._ranks.marker_applied(marker)

    async def get_profile(self, agent_id: str) -> Versioned[AgentProfile] | None:
        """The profile in the agent's last event message."""
        with self._guard("get_profile"):
            return await self._oracle.get_profile(agent_id)

    async def get_many_profiles(
        self, agent_ids: Collection[str]
    ) -> dict[str, Versioned[AgentProfile]]:
        """The profiles of those of ``agent_ids`` that have one: for several, from the heads
        the leaderboard index keeps once it has applied every event committed so far (one
        request for the stream's last event, as ``leaderboard``; an agent it holds no event
        of has none), else one by one (an agent whose last event the index could not
        decode, or an index that does not catch up in time)."""
        wanted = list(dict.fromkeys(agent_ids))
        if len(wanted) < 2:
            return await each_found(wanted, self.get_profile)
        with self._guard("get_many_profiles"):
            last = await self._oracle.last_event_seq()
        try:
            await self._index.wait_for(last, LEADERBOARD_WAIT)
        except StoreUnavailable:
            return await each_found(wanted, self.get_profile)
        found: dict[str, Versioned[AgentProfile]] = {}
        missing = []
        for agent_id in wanted:
            head = self._index.head(agent_id)
            if head is not None:
                found[agent_id] = self._oracle.profile_at(agent_id, *head)
            elif self._index.undecoded(agent_id):  # its read names what is wrong
                missing.append(agent_id)
        if missing:
            found.update(await each_found(missing, self.get_profile))
        return {agent_id: found[agent_id] for agent_id in wanted if agent_id in found}

    async def list_profiles(self) -> list[AgentProfile]:
        """Every agent's profile, by agent id."""
        with self._guard("list_profiles"):
            return await self._oracle.list_profiles()

    async def commit_oracle(self, commit: OracleCommit, expected_revision: int) -> int:
        """Append the event on ``expected_revision``, once per key (see ``oracle``)."""
        with self._guard("commit_oracle"):
            return await self._oracle.commit(commit, expected_revision)

    async def apply_oracle(self, agent_id: str, key: str, fold: OracleFold) -> OracleApplied | None:
        """Read, fold and compare-and-set, retried on conflict."""
        return await self._apply_oracle(agent_id, key, fold, None)

    async def _apply_oracle(
        self, agent_id: str, key: str, fold: OracleFold, headers: dict[str, str] | None
    ) -> OracleApplied | None:
        """``apply_oracle``, a created event's message carrying ``headers``."""
        validate_agent_name(agent_id, "agent_id")

        async def attempt() -> OracleApplied | None:
            with self._guard("apply_oracle"):
                return await self._oracle.apply(agent_id, key, fold, headers)

        return await retry_on_conflict(attempt, op="oracle", tally=self.conflicts)

    def skill_queue(self) -> SkillQueue | None:
        """The skill queue with ``skill_queue=on`` (``store/nats/skillqueue.py``), else None."""
        return self._queue

    async def award(
        self, agent_id: str, key: str, fold: OracleFold, evidence: bytes
    ) -> OracleApplied | None:
        """``apply_oracle``, a created event's message carrying the skill evidence
        ``evidence`` for the applier (``store/nats/skillqueue.py``)."""
        return await self._apply_oracle(agent_id, key, fold, {EVIDENCE_HEADER: evidence.decode()})

    async def apply_oracle_then_skill(
        self, agent_id: str, key: str, fold: OracleFold, skill: SkillItem
    ) -> tuple[OracleApplied | None, SkillApplied | None]:
        """The Oracle event, then the skill event: two streams, two writes (``store.many``)."""
        return await oracle_then_skill(self, agent_id, key, fold, skill)

    async def apply_oracle_many_then_skill(
        self, pairs: Sequence[tuple[OracleItem, SkillItem]]
    ) -> list[tuple[OracleApplied | None, SkillApplied | None]]:
        """The Oracle events, then the skill events of those created (``store.many``), whose
        keys are taken as new: an event created now cannot have had its evidence applied
        before, and one a repeat applies meanwhile refuses the chunk (expected absent),
        which is then retried with every key looked up. One request a judgment fewer."""
        return await oracle_many_then_skill(
            self, pairs, lambda items: self._skill_many(items, fresh=True)
        )

    async def apply_oracle_many(self, items: Sequence[OracleItem]) -> list[OracleApplied | None]:
        """Several agents' events in flight at once, each agent's in order (``store.many``)."""
        return await apply_in_flight(self.apply_oracle, items)

    async def apply_skill_many(
        self, items: Sequence[SkillItem], *, fresh: bool = False
    ) -> list[SkillApplied]:
        """Few atomic batches (``skills.chunks``), each retried on conflict."""
        return await self._skill_many(items, fresh=fresh)

    async def _skill_many(self, items: Sequence[SkillItem], fresh: bool) -> list[SkillApplied]:
        """``apply_skill_many``; with ``fresh``, each chunk's first attempt takes its keys as
        new without looking them up (its retries look them up)."""
        out: list[SkillApplied] = []
        for chunk in chunks(items):
            attempt = self._chunk_attempts(chunk, fresh)
            out.extend(await retry_on_conflict(attempt, op="skill", tally=self.conflicts))
        return out

    def _chunk_attempts(
        self, chunk: Sequence[SkillItem], fresh: bool
    ) -> Callable[[], Awaitable[list[SkillApplied]]]:
        """One chunk's attempts: the first without looking its keys up when ``fresh``."""
        tries = 0

        async def attempt() -> list[SkillApplied]:
            nonlocal tries
            tries += 1
            with self._guard("apply_skill_many"):
                return await self._skills.apply_many(chunk, look_up=not fresh or tries > 1)

        return attempt

    async def apply_skill(self, key: str, agents: Sequence[str], fold: SkillFold) -> SkillApplied:
        """One atomic batch on the event's key and its agents' states, retried on conflict."""

        async def attempt() -> SkillApplied:
            with self._guard("apply_skill"):
                return await self._skills.apply(key, agents, fold)

        return await retry_on_conflict(attempt, op="skill", tally=self.conflicts)

    async def commit_skill_fit(self, seq: int, fold: FitFold) -> None:
        """The states in chunks, then the fleet's, then the states written meanwhile again
        (``skillfit``); each chunk retried on conflict."""
        with self._guard("commit_skill_fit"):
            await commit_fit(self._skills, seq, fold, self.conflicts)

    async def get_skills(self, agent_ids: Collection[str]) -> dict[str, AgentSkill]:
        """From the skill bucket, at once."""
        with self._guard("get_skills"):
            return await self._skills.get_states(agent_ids)

    async def list_skills(self) -> list[AgentSkill]:
        """Every agent's state from the skill bucket."""
        with self._guard("list_skills"):
            return await self._skills.list_states()

    async def get_fleet_skill(self) -> FleetSkill:
        """The fleet's entry."""
        with self._guard("get_fleet_skill"):
            return await self._skills.fleet()

    async def get_skill_event(self, key: str) -> SkillEvent | None:
        """The event's entry."""
        with self._guard("get_skill_event"):
            await self._skills.repairs.wait()
            return await self._skills.get_event(key)

    async def get_skill_events(self, keys: Collection[str]) -> dict[str, SkillEvent]:
        """Each event's entry, ``MANY_GETS`` gets in flight at a time."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, SkillEvent] = {}
        with self._guard("get_skill_events"):
            await self._skills.repairs.wait()
            for start in range(0, len(wanted), MANY_GETS):
                chunk = wanted[start : start + MANY_GETS]
                found.update(await each_found(chunk, self._skills.get_event))
        return found

    async def skill_events(self, *, after: int = 0, limit: int = 1000) -> list[SkillEvent]:
        """Read from the bucket's stream in order."""
        with self._guard("skill_events"):
            await self._skills.repairs.wait()
            return await self._skills.events(after, limit)

    async def count_skill_events(self, *, after: int = 0) -> int:
        """Counted by the server (``SkillKv.count_events``): two requests."""
        with self._guard("count_skill_events"):
            await self._skills.repairs.wait()
            return await self._skills.count_events(after)

    async def get_event(self, agent_id: str, key: str) -> OracleEvent | None:
        """The event held by the key's claim."""
        with self._guard("get_event"):
            return await self._oracle.get_event(agent_id, key)

    async def events(self, agent_id: str) -> list[OracleEvent]:
        """The agent's events in order."""
        with self._guard("events"):
            return await self._oracle.events(agent_id)

    async def ledger(
        self, agent_id: str, *, offset: int = 0, limit: int = 100
    ) -> list[LedgerEntry]:
        """A page of the agent's ledger lines, oldest first."""
        with self._guard("ledger"):
            return await self._oracle.ledger(agent_id, offset, limit)

    async def events_after(
        self, after: int = 0, limit: int = 1000
    ) -> list[tuple[int, OracleEvent]]:
        """By stream sequence (``nats/oracle.py``)."""
        with self._guard("events_after"):
            return await self._oracle.events_after(after, limit)

    async def ledger_after(self, after: int = 0, limit: int = 1000) -> list[LedgerEntry]:
        """From the events, by id (``nats/oracle.py``)."""
        with self._guard("ledger_after"):
            return await self._oracle.ledger_after(after, limit)

    async def leaderboard(self, task_type: str | None, limit: int) -> list[LeaderboardRow]:
        """From the in-memory index, once it has applied every event committed so far."""
        check_limit(limit)
        with self._guard("leaderboard"):
            await self._index.wait_for(await self._oracle.last_event_seq(), LEADERBOARD_WAIT)
            return self._index.rows(task_type, limit)

    async def task_types(self) -> frozenset[str]:
        """From the in-memory index (its orders), once it has applied every event."""
        with self._guard("task_types"):
            await self._index.wait_for(await self._oracle.last_event_seq(), LEADERBOARD_WAIT)
            return self._index.task_types()

    async def put_registration(self, registration: Registration) -> None:
        """Insert or replace."""
        with self._guard("put_registration"):
            await self._docs.put_registration(registration)

    async def get_registration(self, agent_id: str) -> Registration | None:
        """One registration."""
        with self._guard("get_registration"):
            return await self._docs.get_registration(agent_id)

    async def get_many_registrations(self, agent_ids: Collection[str]) -> dict[str, Registration]:
        """The registrations of those of ``agent_ids`` that have one: for several, from the
        bucket's mirror (``nats/mirror.py``), else fetched at once."""
        bucket = self.options.registrations_bucket

        def registration(agent_id: str, _seq: int, data: bytes) -> Registration:
            return decode(Registration, data, f"{bucket}/{agent_id}")

        wanted = [a for a in dict.fromkeys(agent_ids) if kv_key_ok(a)]
        return await self._mirrored(
            self._registration_mirror, wanted, self.get_registration, registration
        )

    async def list_registrations(
        self, *, tag: str | None = None, provider: str | None = None
    ) -> list[Registration]:
        """By agent id."""
        with self._guard("list_registrations"):
            found = await self._docs.list_registrations()
        return [r for r in found if registration_matches(r, tag, provider)]

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
        with self._guard("put_deliberation"):
            await self._docs.put_deliberation(doc)

    async def get_deliberation(self, deliberation_id: str) -> DeliberationDoc | None:
        """One record."""
        with self._guard("get_deliberation"):
            return await self._docs.get_deliberation(deliberation_id)

    async def list_deliberations(
        self,
        *,
        limit: int = 50,
        offset: int = 0,
        statuses: Collection[str] | None = None,
        agent: str | None = None,
    ) -> Sequence[DeliberationDoc]:
        """Newest first."""
        with self._guard("list_deliberations"):
            return await self._docs.list_deliberations(limit, offset, statuses, agent)

    async def deliberations_after(
        self, after: int = 0, limit: int = 100
    ) -> list[tuple[int, DeliberationDoc]]:
        """By the bucket's stream sequence: the order last written (``nats/records.py``)."""
        with self._guard("deliberations_after"):
            return await self._docs.deliberations_after(after, limit)

    async def renew_lease(self, holder: str, expires_at: float) -> None:
        """Insert or extend (``leases``)."""
        with self._guard("renew_lease"):
            await self._leases.renew(holder, expires_at)

    async def drop_lease(self, holder: str) -> None:
        """End it now."""
        with self._guard("drop_lease"):
            await self._leases.drop(holder)

    async def live_leases(self, now: float) -> frozenset[str]:
        """Those running past ``now``."""
        with self._guard("live_leases"):
            return await self._leases.live(now)

    async def put_served(self, records: Sequence[ServedRequest], keep_s: float) -> None:
        """Each record under its contract id in ``<prefix>_served`` (store/nats/served.py:
        JetStream forgets them after the bucket's time to live)."""
        if records:
            with self._guard("put_served"):
                await self._served.put(list(records), keep_s)

    async def get_served(self, contract_id: str) -> ServedRequest | None:
        """One record."""
        with self._guard("get_served"):
            return await self._served.get(contract_id)

    async def find_served(self, ids: Collection[str]) -> dict[str, ServedRequest]:
        """By contract id in ``<prefix>_served``, else by request id in
        ``<prefix>_served_requests`` (store/nats/served.py)."""
        with self._guard("find_served"):
            return await self._served.find(ids)

    async def list_served(self, since: float, limit: int) -> list[ServedRequest]:
        """At most ``limit`` messages of the bucket's stream read (``KvServed.since``)."""
        with self._guard("list_served"):
            return await self._served.since(since, limit)

    async def add_spend(self, charges: Mapping[tuple[str, str], int]) -> None:
        """Each key compare-and-set, retried on a conflict (``spend``)."""
        with self._guard("add_spend"):
            await self._spend.add(charges)

    async def get_spend(self, keys: Collection[tuple[str, str]]) -> dict[tuple[str, str], int]:
        """The keys that have a value."""
        with self._guard("get_spend"):
            return await self._spend.get(keys)

    async def reserve_spend(self, hold: Hold, limit_usd: float, now: float) -> Reserved:
        """Compare-and-set on the client's holds entry, retried (``spend``)."""
        with self._guard("reserve_spend"):
            return await self._spend.reserve(hold, limit_usd, now)

    async def settle_spend(self, hold: Hold, charges: Mapping[tuple[str, str], int]) -> None:
        """The charges added, then the hold dropped (``spend``)."""
        with self._guard("settle_spend"):
            await self._spend.settle(hold, charges)

    async def release_spend(self, hold: Hold) -> None:
        """The hold dropped (``spend``)."""
        with self._guard("release_spend"):
            await self._spend.release(hold)

    async def put_check(self, check: PendingCheck, revision: int) -> int:
        """Create or compare-and-set in ``<prefix>_checks`` (``checks``)."""
        with self._guard("put_check"):
            return await self._checks.put(check, revision)

    async def list_checks(self, limit: int) -> list[Versioned[PendingCheck]]:
        """Every key of ``<prefix>_checks`` read; the earliest answered first."""
        with self._guard("list_checks"):
            return await self._checks.list(limit)

    async def delete_check(self, contract_id: str) -> None:
        """Delete its key."""
        with self._guard("delete_check"):
            await self._checks.delete(contract_id)
