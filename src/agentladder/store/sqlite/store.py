"""The embedded default store: one SQLite file in WAL mode.

Writes go through one connection on one thread (``writer.GroupWriter``), in
``BEGIN IMMEDIATE`` transactions, so the file's write lock is taken before any revision is
read: two threads, tasks or OS processes writing the same file serialize on it and lose
nothing. Writes waiting together share one transaction (one savepoint each) and one
commit, acknowledged only after it. Reads see the last committed snapshot and never block
writes. Short, bounded reads (one agent's stats, profile, registration or event, the
named agents' batches, a leaderboard) run on the calling event loop's thread, on a
connection of its own: the hop to a thread and back cost about 0.5 ms at the median on
the machines measured, and doubled the tail (docs/benchmarks.md). Everything else (lists,
scans, the agent listing) runs on ``READERS`` threads, each with its own connection, so
that a long read never holds the event loop. ``?inline_reads=off`` sends every read to the
threads (a file much larger than the OS's cache, whose reads would wait on the disk).

``sqlite:///path.db?synchronous=normal`` trades durability on power loss for speed; the
default ``full`` syncs every commit, so an acknowledged write survives a crash of the
process and of the machine.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path

from agentladder.domain.frozen import replaced
from agentladder.domain.profile import AgentProfile
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.store.base import (
    LedgerEntry,
    OracleApplied,
    OracleFold,
    OracleItem,
    SkillItem,
    StatsUpdate,
)
from agentladder.store.codec import decode
from agentladder.store.directory import directory_from_reads
from agentladder.store.leaderboard import check_limit
from agentladder.store.listing import (
    AgentListingCache,
    listing_body,
    registration_parts,
)
from agentladder.store.lru import Lru
from agentladder.store.many import created_at, paired
from agentladder.store.records import (
    DeliberationDoc,
    DirectoryQuery,
    LeaderboardRow,
    OracleCommit,
    OracleEvent,
    Registration,
    Versioned,
)
from agentladder.store.served import ServedRequest
from agentladder.store.skillqueue import SkillQueue
from agentladder.store.skills import SkillApplied
from agentladder.store.spend import Hold, Reserved
from agentladder.store.sqlite import many, ops, pages
from agentladder.store.sqlite.checks import SqliteChecks
from agentladder.store.sqlite.directory import (
    LISTING,
    OBJECTS,
    directory_sql,
    object_args,
)
from agentladder.store.sqlite.rows import (
    deliberation_from_row,
    encode_document,
    finish_listing,
    joined_body,
    rows_in,
    where_registrations,
)
from agentladder.store.sqlite.skills import SqliteSkills

__all__ = ["SqliteStore"]

FIND_PAGE = 400
"""Ids looked up by one statement of ``find_served`` (each is bound twice)."""


class SqliteStore(SqliteSkills, SqliteChecks):
    """A ``Store`` in one SQLite file."""

    def __init__(
        self,
        path: str | Path,
        *,
        synchronous: str = "full",
        checkpoint_pages: int | None = None,
        inline_reads: bool = True,
    ) -> None:
        super().__init__(
            path,
            synchronous=synchronous,
            checkpoint_pages=checkpoint_pages,
            inline_reads=inline_reads,
        )
        # Profiles as last committed by this writer, by revision: a read finding the same
        # revision in the file skips decoding (another process's write changes it). The
        # recently used ones only (``store/lru.py``).
        self._profiles: Lru[str, tuple[int, AgentProfile]] = Lru()
        # Rank stats the same way: agent id -> (revision, stats) as committed or last read.
        self._stats: Lru[str, tuple[int, AgentPerformanceStats]] = Lru()
        # agent id -> (the stored JSON text, its decoded registration)
        self._registrations: dict[str, tuple[str, Registration]] = {}
        self._directory = AgentListingCache()  # the directory's objects when built in Python

    async def get_stats(self, agent_id: str) -> Versioned[AgentPerformanceStats] | None:
        """One agent's stats."""
        return await self._read_short(lambda c: ops.get_stats(c, agent_id))

    async def list_stats(self) -> dict[str, Versioned[AgentPerformanceStats]]:
        """Every agent's stats, by agent id."""

        def run(conn: sqlite3.Connection) -> dict[str, Versioned[AgentPerformanceStats]]:
            rows = conn.execute(
                "SELECT agent_id, stats_json, revision FROM rank_stats ORDER BY agent_id"
            )
            return {
                agent: Versioned(decode(AgentPerformanceStats, data, f"rank_stats/{agent}"), rev)
                for agent, data, rev in rows
            }

        return await self._read(run)

    async def get_many_stats(
        self, agent_ids: Collection[str]
    ) -> dict[str, Versioned[AgentPerformanceStats]]:
        """The stats of those of ``agent_ids`` that have some, in one read; a revision
        already decoded (committed here or read before) is not decoded again."""
        wanted = list(dict.fromkeys(agent_ids))
        cache = self._stats

        def run(conn: sqlite3.Connection) -> dict[str, Versioned[AgentPerformanceStats]]:
            found: dict[str, Versioned[AgentPerformanceStats]] = {}
            for agent, data, revision in rows_in(
                conn, "SELECT agent_id, stats_json, revision FROM rank_stats", "agent_id", wanted
            ):
                known = cache.get(agent)
                if known is None or known[0] != revision:
                    known = (revision, decode(AgentPerformanceStats, data, f"rank_stats/{agent}"))
                    cache.put(agent, known)
                found[agent] = Versioned(known[1], revision)
            return {agent: found[agent] for agent in wanted if agent in found}

        return await self._read_many(run, len(wanted))

    async def commit_stats(
        self, updates: Mapping[str, StatsUpdate], *, marker: str | None = None
    ) -> dict[str, int]:
        """All compare-and-sets and the marker in one job of the writer: all or nothing."""

        def run(conn: sqlite3.Connection) -> dict[str, int]:
            revisions = ops.commit_stats(conn, updates, marker)
            fresh = {agent: (revisions[agent], updates[agent][0]) for agent in revisions}
            self._writer.after_commit(lambda: self._stats.update(fresh))
            return revisions

        return await self._write(run)

    async def marker_applied(self, marker: str) -> bool:
        """Whether the marker was committed."""
        return await self._read(
            lambda c: (
                c.execute("SELECT 1 FROM ranking_markers WHERE marker = ?", (marker,)).fetchone()
                is not None
            )
        )

    async def get_profile(self, agent_id: str) -> Versioned[AgentProfile] | None:
        """One profile."""
        return await self._read_short(lambda c: ops.get_profile(c, agent_id))

    async def get_many_profiles(
        self, agent_ids: Collection[str]
    ) -> dict[str, Versioned[AgentProfile]]:
        """The profiles of those of ``agent_ids`` that have one, in one read; a revision
        already decoded (committed here or read before) is not read or decoded again."""
        wanted = list(dict.fromkeys(agent_ids))
        cache = self._profiles

        def run(conn: sqlite3.Connection) -> dict[str, Versioned[AgentProfile]]:
            revisions = dict(rows_in(conn, "SELECT id, revision FROM agent_profiles", "id", wanted))
            found: dict[str, Versioned[AgentProfile]] = {}
            stale = []
            for agent, revision in revisions.items():
                known = cache.get(agent)
                if known is not None and known[0] == revision:
                    found[agent] = Versioned(known[1], revision)
                else:
                    stale.append(agent)
            for agent, data, revision in rows_in(
                conn, "SELECT id, profile_json, revision FROM agent_profiles", "id", stale
            ):
                profile = decode(AgentProfile, data, f"agent_profiles/{agent}")
                cache.put(agent, (revision, profile))
                found[agent] = Versioned(profile, revision)
            return {agent: found[agent] for agent in wanted if agent in found}

        return await self._read_many(run, len(wanted))

    async def list_profiles(self) -> list[AgentProfile]:
        """Every profile by agent id."""

        def run(conn: sqlite3.Connection) -> list[AgentProfile]:
            rows = conn.execute("SELECT id, profile_json FROM agent_profiles ORDER BY id")
            return [decode(AgentProfile, data, f"agent_profiles/{agent}") for agent, data in rows]

        return await self._read(run)

    async def commit_oracle(self, commit: OracleCommit, expected_revision: int) -> int:
        """Event, ledger lines and profile in one job of the writer: all or nothing."""
        return await self._write(lambda c: ops.commit_oracle(c, commit, expected_revision))

    async def apply_oracle(self, agent_id: str, key: str, fold: OracleFold) -> OracleApplied | None:
        """Check, read, fold and write in one job of the writer: no conflict is possible."""
        return await self._write(self._oracle_job(agent_id, key, fold))

    def skill_queue(self) -> SkillQueue | None:
        """None: skill evidence is applied on the judgment's request path
        (``store/skillqueue.py``)."""
        return None

    async def apply_oracle_then_skill(
        self, agent_id: str, key: str, fold: OracleFold, skill: SkillItem
    ) -> tuple[OracleApplied | None, SkillApplied | None]:
        """Both in one job of the writer: one transaction and one commit, both or neither
        (a failure of the skill's part rolls the event back too)."""
        oracle = self._oracle_job(agent_id, key, fold)
        evidence = self._skill_job(*skill)

        def run(conn: sqlite3.Connection) -> tuple[OracleApplied | None, SkillApplied | None]:
            applied = oracle(conn)
            if applied is None or not applied.created:
                return applied, None
            return applied, evidence(conn)

        return await self._write(run)

    def _oracle_job(
        self, agent_id: str, key: str, fold: OracleFold
    ) -> Callable[[sqlite3.Connection], OracleApplied | None]:
        """The job of ``apply_oracle``."""

        def run(conn: sqlite3.Connection) -> OracleApplied | None:
            stored = ops.get_event(conn, agent_id, key)
            current = ops.get_profile(conn, agent_id, self._profiles.get(agent_id))
            if stored is not None and current is not None:
                return OracleApplied(stored, current.value, created=False)
            commit = fold(None if current is None else current.value)
            if commit is None:
                return None
            if current is None:
                revision = ops.commit_oracle(conn, commit, 0)
            else:
                revision = ops.commit_oracle(conn, commit, current.revision, current.value)
            remember = (revision, commit.profile)
            self._writer.after_commit(lambda: self._profiles.put(agent_id, remember))
            event = replaced(commit.event, seq=revision)
            return OracleApplied(event, commit.profile, created=True)

        return run

    async def apply_oracle_many(self, items: Sequence[OracleItem]) -> list[OracleApplied | None]:
        """Every item in one job of the writer, so one transaction (``sqlite.many``)."""
        return await self._write(self._oracle_many_job(items))

    def _oracle_many_job(
        self, items: Sequence[OracleItem]
    ) -> Callable[[sqlite3.Connection], list[OracleApplied | None]]:
        """The job of ``apply_oracle_many`` (also run inside a larger one)."""
        cache = self._profiles

        def run(conn: sqlite3.Connection) -> list[OracleApplied | None]:
            agents = {agent_id for agent_id, _, _ in items}
            known = {a: found for a in agents if (found := cache.get(a)) is not None}
            written = many.apply_many(conn, items, known)
            self._writer.after_commit(lambda: cache.update(written.profiles))
            return written.outcomes

        return run

    async def apply_oracle_many_then_skill(
        self, pairs: Sequence[tuple[OracleItem, SkillItem]]
    ) -> list[tuple[OracleApplied | None, SkillApplied | None]]:
        """All in one job of the writer: one transaction and one commit for the batch's
        events and the skill evidence of those created (a failure of either rolls back
        both)."""
        oracle = self._oracle_many_job([item for item, _ in pairs])

        def run(conn: sqlite3.Connection) -> list[tuple[OracleApplied | None, SkillApplied | None]]:
            applied = oracle(conn)
            created = created_at(applied)
            if not created:
                return paired(applied, [], [])
            observed = self._skill_many_job([pairs[i][1] for i in created])(conn)
            return paired(applied, created, observed)

        return await self._write(run)

    async def get_event(self, agent_id: str, key: str) -> OracleEvent | None:
        """The agent's event with this key."""
        return await self._read_short(lambda c: ops.get_event(c, agent_id, key))

    async def events(self, agent_id: str) -> list[OracleEvent]:
        """The agent's events in order."""

        def run(conn: sqlite3.Connection) -> list[OracleEvent]:
            rows = conn.execute(
                "SELECT agent_id, key, seq, kind, payload, payload_hash, result, lines, at"
                " FROM oracle_events WHERE agent_id = ? ORDER BY seq",
                (agent_id,),
            )
            return [ops.event_from_row(row) for row in rows]

        return await self._read(run)

    async def ledger(
        self, agent_id: str, *, offset: int = 0, limit: int = 100
    ) -> list[LedgerEntry]:
        """A page of the agent's xp_history, oldest first."""

        def run(conn: sqlite3.Connection) -> list[LedgerEntry]:
            rows = conn.execute(
                "SELECT id, agent_id, event, xp_awarded, contract_id, timestamp FROM xp_history"
                " WHERE agent_id = ? ORDER BY id LIMIT ? OFFSET ?",
                (agent_id, limit, offset),
            )
            return [ops.ledger_entry(row) for row in rows]

        return await self._read(run)

    async def events_after(
        self, after: int = 0, limit: int = 1000
    ) -> list[tuple[int, OracleEvent]]:
        """By rowid (``sqlite/pages.py``)."""
        return await self._read(lambda c: pages.events_after(c, after, limit))

    async def ledger_after(self, after: int = 0, limit: int = 1000) -> list[LedgerEntry]:
        """By id (``sqlite/pages.py``)."""
        return await self._read(lambda c: pages.ledger_after(c, after, limit))

    async def leaderboard(self, task_type: str | None, limit: int) -> list[LeaderboardRow]:
        """From the leaderboard indexes."""
        check_limit(limit)
        return await self._read_short(lambda c: ops.leaderboard(c, task_type, limit))

    async def task_types(self) -> frozenset[str]:
        """The distinct task types of the specializations table (from its index)."""

        def run(conn: sqlite3.Connection) -> frozenset[str]:
            rows = conn.execute("SELECT DISTINCT task_type FROM specializations")
            return frozenset(task_type for (task_type,) in rows)

        return await self._read(run)

    async def put_registration(self, registration: Registration) -> None:
        """Insert or replace, with its listing parts (``store.listing``) in the same row."""

        def run(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO registrations (agent_id, last_seen, doc, listing_head, listing_tail)"
                " VALUES (?,?,?,?,?) ON CONFLICT (agent_id) DO UPDATE SET"
                " last_seen = excluded.last_seen, doc = excluded.doc,"
                " listing_head = excluded.listing_head, listing_tail = excluded.listing_tail",
                (registration.agent_id, registration.last_seen, registration.model_dump_json(),
                 *registration_parts(registration)),
            )  # fmt: skip

        await self._write(run)

    async def get_registration(self, agent_id: str) -> Registration | None:
        """One registration, in one SELECT; its stored text decoded once (as for the
        listing: a heartbeat, here or by another process, changes the text)."""
        cache = self._registrations

        def run(conn: sqlite3.Connection) -> Registration | None:
            # every row read: the statement ends here and holds no snapshot after it
            rows = conn.execute(
                "SELECT doc FROM registrations WHERE agent_id = ?", (agent_id,)
            ).fetchall()
            if not rows:
                return None
            (doc,) = rows[0]
            cached = cache.get(agent_id)
            if cached is None or cached[0] != doc:
                cached = (doc, decode(Registration, doc, f"registrations/{agent_id}"))
                cache[agent_id] = cached
            return cached[1]

        return await self._read_short(run, one_statement=True)

    async def get_many_registrations(self, agent_ids: Collection[str]) -> dict[str, Registration]:
        """The registrations of those of ``agent_ids`` that have one, in one read (each
        stored text decoded once, as for the listing)."""
        wanted = list(dict.fromkeys(agent_ids))
        cache = self._registrations

        def run(conn: sqlite3.Connection) -> dict[str, Registration]:
            found: dict[str, Registration] = {}
            for agent, doc in rows_in(
                conn, "SELECT agent_id, doc FROM registrations", "agent_id", wanted
            ):
                cached = cache.get(agent)
                if cached is None or cached[0] != doc:
                    cached = (doc, decode(Registration, doc, f"registrations/{agent}"))
                    cache[agent] = cached
                found[agent] = cached[1]
            return {agent: found[agent] for agent in wanted if agent in found}

        return await self._read_many(run, len(wanted))

    async def list_registrations(
        self, *, tag: str | None = None, provider: str | None = None
    ) -> list[Registration]:
        """By agent id; the filters are evaluated in SQLite."""
        cache = self._registrations
        where, args = where_registrations(tag, provider)

        def run(conn: sqlite3.Connection) -> list[Registration]:
            rows = conn.execute(
                f"SELECT agent_id, doc FROM registrations{where} ORDER BY agent_id", args
            )
            found = []
            for agent, doc in rows:
                # decoded once per stored text: only heartbeats since the last listing cost
                cached = cache.get(agent)
                if cached is None or cached[0] != doc:
                    cached = (doc, decode(Registration, doc, f"registrations/{agent}"))
                    cache[agent] = cached
                found.append(cached[1])
            return found

        return await self._read(run)

    async def agent_listing_json(self, now: float, online_window_s: float) -> bytes:
        """One query: each agent's object is concatenated by SQLite from its registration's
        listing parts, its status (``domain.registry.status_within``, evaluated in SQL)
        and its stats' JSON as stored, and the objects joined. A registration without
        parts (written by a writer that does not keep them) or stats that are not JSON are
        read and decoded instead."""
        args = object_args(now, online_window_s)

        def run(conn: sqlite3.Connection) -> bytes:
            joined, unfinished = conn.execute(LISTING, args).fetchone()
            if not unfinished:
                return joined_body(joined)
            rows = conn.execute(OBJECTS, args).fetchall()
            missing = [agent for agent, data in rows if data is None]
            finished = finish_listing(conn, missing, now, online_window_s)
            return listing_body(finished.get(agent, data) for agent, data in rows)

        return await self._read(run)

    async def agent_directory_json(
        self, now: float, online_window_s: float, query: DirectoryQuery
    ) -> bytes:
        """One query (``directory.directory_sql``): filtered, sorted and paged by
        SQLite, each agent's object concatenated from the stored parts as for the listing,
        nothing decoded. If an object cannot be built that way (a registration without
        parts, stats that are not JSON), the directory is built from the reads instead."""
        sql, args = directory_sql(query, now, online_window_s)
        joined, unfinished = await self._read(lambda c: c.execute(sql, args).fetchone())
        if not unfinished:
            return joined_body(joined)
        return await directory_from_reads(self, self._directory, now, online_window_s, query)

    async def put_deliberation(self, doc: DeliberationDoc) -> None:
        """Insert or replace, with its agents (``deliberation_agents``) in the same
        transaction."""
        agents = doc.body.get("agents")
        listed = agents if isinstance(agents, list) else []
        names = sorted({name for name in listed if isinstance(name, str)})

        def run(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO deliberations (id, status, created_at, doc) VALUES (?,?,?,?)"
                " ON CONFLICT (id) DO UPDATE SET status = excluded.status,"
                " created_at = excluded.created_at, doc = excluded.doc",
                (doc.id, doc.status, doc.created_at, encode_document(doc.body)),
            )
            conn.execute("DELETE FROM deliberation_agents WHERE deliberation_id = ?", (doc.id,))
            conn.executemany(
                "INSERT INTO deliberation_agents (agent_id, created_at, deliberation_id)"
                " VALUES (?,?,?)",
                [(name, doc.created_at, doc.id) for name in names],
            )

        await self._write(run)

    async def get_deliberation(self, deliberation_id: str) -> DeliberationDoc | None:
        """One record."""

        def run(conn: sqlite3.Connection) -> DeliberationDoc | None:
            found = conn.execute(
                "SELECT id, status, created_at, doc FROM deliberations WHERE id = ?",
                (deliberation_id,),
            ).fetchone()
            return None if found is None else deliberation_from_row(found)

        return await self._read(run)

    async def list_deliberations(
        self,
        *,
        limit: int = 50,
        offset: int = 0,
        statuses: Collection[str] | None = None,
        agent: str | None = None,
    ) -> Sequence[DeliberationDoc]:
        """Newest first; an agent's from ``deliberation_agents`` (one index range)."""
        wanted = None if statuses is None else sorted(statuses)

        def run(conn: sqlite3.Connection) -> list[DeliberationDoc]:
            where, args = "", list(wanted or ())
            if wanted is not None:
                marks = ",".join("?" * len(wanted))
                where = f" WHERE status IN ({marks})" if wanted else " WHERE 0"
            if agent is None:
                sql = (
                    f"SELECT id, status, created_at, doc FROM deliberations{where}"
                    " ORDER BY created_at DESC, id LIMIT ? OFFSET ?"
                )
            else:
                where = where.replace(" WHERE", " AND", 1)
                sql = (
                    "SELECT d.id, d.status, d.created_at, d.doc FROM deliberation_agents AS a"
                    " JOIN deliberations AS d ON d.id = a.deliberation_id"
                    f" WHERE a.agent_id = ?{where}"
                    " ORDER BY a.created_at DESC, a.deliberation_id LIMIT ? OFFSET ?"
                )
                args.insert(0, agent)
            rows = conn.execute(sql, (*args, limit, offset))
            return [deliberation_from_row(row) for row in rows]

        return await self._read(run)

    async def deliberations_after(
        self, after: int = 0, limit: int = 100
    ) -> list[tuple[int, DeliberationDoc]]:
        """By rowid: the order created (``sqlite/pages.py``)."""
        return await self._read(lambda c: pages.deliberations_after(c, after, limit))

    async def renew_lease(self, holder: str, expires_at: float) -> None:
        """Insert or extend."""
        await self._write(lambda c: ops.renew_lease(c, holder, expires_at))

    async def drop_lease(self, holder: str) -> None:
        """End it now."""
        await self._write(lambda c: c.execute("DELETE FROM leases WHERE holder = ?", (holder,)))

    async def live_leases(self, now: float) -> frozenset[str]:
        """Those running past ``now``."""
        return await self._read(lambda c: ops.live_leases(c, now))

    async def put_served(self, records: Sequence[ServedRequest], keep_s: float) -> None:
        """Insert or replace them in one transaction; forget those older than ``keep_s``
        before the newest."""
        if not records:
            return
        rows = [(r.contract_id, r.at, r.request_id, r.model_dump_json()) for r in records]
        horizon = max(r.at for r in records) - keep_s

        def run(conn: sqlite3.Connection) -> None:
            conn.executemany(
                "INSERT INTO gateway_served (contract_id, at, request_id, doc) VALUES (?,?,?,?)"
                " ON CONFLICT (contract_id) DO UPDATE SET at = excluded.at,"
                " request_id = excluded.request_id, doc = excluded.doc",
                rows,
            )
            conn.execute("DELETE FROM gateway_served WHERE at < ?", (horizon,))

        await self._write(run)

    async def get_served(self, contract_id: str) -> ServedRequest | None:
        """One record."""

        def run(conn: sqlite3.Connection) -> ServedRequest | None:
            found = conn.execute(
                "SELECT doc FROM gateway_served WHERE contract_id = ?", (contract_id,)
            ).fetchone()
            return (
                None if found is None else decode(ServedRequest, found[0], f"served/{contract_id}")
            )

        return await self._read_short(run)

    async def find_served(self, ids: Collection[str]) -> dict[str, ServedRequest]:
        """By the primary key, then by the index on the request id (newest first), in
        pages of ``FIND_PAGE`` ids, on a reader thread."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}

        def run(conn: sqlite3.Connection) -> dict[str, ServedRequest]:
            found: dict[str, ServedRequest] = {}
            for start in range(0, len(wanted), FIND_PAGE):
                page = wanted[start : start + FIND_PAGE]
                marks = ",".join("?" * len(page))
                rows = conn.execute(
                    f"SELECT contract_id, contract_id, at, doc FROM gateway_served"
                    f" WHERE contract_id IN ({marks}) UNION ALL"
                    f" SELECT request_id, contract_id, at, doc FROM gateway_served"
                    f" WHERE request_id IN ({marks}) ORDER BY 1, 3 DESC",
                    (*page, *page),
                )
                for key, contract, _, doc in rows:
                    if key not in found or key == contract:  # a contract id wins
                        found[key] = decode(ServedRequest, doc, f"served/{contract}")
            return found

        return await self._read(run)

    async def list_served(self, since: float, limit: int) -> list[ServedRequest]:
        """One range of the index on ``at``, newest first, on a reader thread."""

        def run(conn: sqlite3.Connection) -> list[ServedRequest]:
            rows = conn.execute(
                "SELECT contract_id, doc FROM gateway_served WHERE at >= ?"
                " ORDER BY at DESC, contract_id LIMIT ?",
                (since, max(0, limit)),
            )
            return [decode(ServedRequest, doc, f"served/{contract}") for contract, doc in rows]

        return await self._read(run)

    async def add_spend(self, charges: Mapping[tuple[str, str], int]) -> None:
        """One UPSERT per key, all in one transaction (``sqlite/ops.py``)."""
        if charges:
            await self._write(lambda c: ops.add_spend(c, charges))

    async def get_spend(self, keys: Collection[tuple[str, str]]) -> dict[tuple[str, str], int]:
        """The keys that have a row."""
        wanted = list(dict.fromkeys(keys))
        return await self._read(lambda c: ops.get_spend(c, wanted)) if wanted else {}

    async def reserve_spend(self, hold: Hold, limit_usd: float, now: float) -> Reserved:
        """Decided and added in one write transaction (``sqlite/ops.py``)."""
        return await self._write(lambda c: ops.reserve_spend(c, hold, limit_usd, now))

    async def settle_spend(self, hold: Hold, charges: Mapping[tuple[str, str], int]) -> None:
        """The charges added and the hold dropped in one transaction."""

        def run(conn: sqlite3.Connection) -> None:
            ops.add_spend(conn, charges)
            ops.release_spend(conn, hold)

        await self._write(run)

    async def release_spend(self, hold: Hold) -> None:
        """The hold's row deleted."""
        await self._write(lambda c: ops.release_spend(c, hold))
