"""The SQL of the SQLite store, as plain synchronous functions over a connection.

Write functions run inside the writer's transaction (``writer.GroupWriter``: BEGIN
IMMEDIATE, one savepoint per write), so the file's write lock is held before any revision
is read: two processes never both read a revision and then both write.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from agentladder.domain.budget import refusal
from agentladder.domain.profile import AgentProfile
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.errors import AlreadyApplied, RevisionConflict
from agentladder.store.base import LEASE_KEPT_S, LedgerEntry, StatsUpdate
from agentladder.store.codec import decode, loads
from agentladder.store.records import LeaderboardRow, OracleCommit, OracleEvent, Versioned
from agentladder.store.spend import Hold, Reserved

__all__ = [
    "EVENT_COLUMNS",
    "commit_oracle",
    "commit_stats",
    "get_event",
    "get_profile",
    "get_stats",
    "leaderboard",
    "release_spend",
    "reserve_spend",
]

T = TypeVar("T")


def get_stats(conn: sqlite3.Connection, agent_id: str) -> Versioned[AgentPerformanceStats] | None:
    """One agent's rank stats."""
    found = conn.execute(
        "SELECT stats_json, revision FROM rank_stats WHERE agent_id = ?", (agent_id,)
    ).fetchone()
    if found is None:
        return None
    return Versioned(decode(AgentPerformanceStats, found[0], f"rank_stats/{agent_id}"), found[1])


def commit_stats(
    conn: sqlite3.Connection, updates: Mapping[str, StatsUpdate], marker: str | None
) -> dict[str, int]:
    """Compare-and-set every agent's stats and record the marker, in one transaction."""
    revisions: dict[str, int] = {}
    if marker is not None:
        applied = conn.execute(
            "SELECT 1 FROM ranking_markers WHERE marker = ?", (marker,)
        ).fetchone()
        if applied is not None:
            raise AlreadyApplied(marker)
        conn.execute("INSERT INTO ranking_markers (marker) VALUES (?)", (marker,))
    for agent_id, (stats, expected) in updates.items():
        found = conn.execute(
            "SELECT revision FROM rank_stats WHERE agent_id = ?", (agent_id,)
        ).fetchone()
        actual = 0 if found is None else int(found[0])
        if actual != expected:
            raise RevisionConflict(agent_id, expected, actual)
        conn.execute(
            "INSERT INTO rank_stats (agent_id, revision, rank, stats_json) VALUES (?,?,?,?)"
            " ON CONFLICT (agent_id) DO UPDATE SET revision = excluded.revision,"
            " rank = excluded.rank, stats_json = excluded.stats_json",
            (agent_id, actual + 1, stats.rank, stats.model_dump_json()),
        )
        revisions[agent_id] = actual + 1
    return revisions


def get_profile(
    conn: sqlite3.Connection, agent_id: str, known: tuple[int, AgentProfile] | None = None
) -> Versioned[AgentProfile] | None:
    """One Oracle profile, from its JSON column; ``known`` (revision, profile) skips decoding."""
    found = conn.execute("SELECT revision FROM agent_profiles WHERE id = ?", (agent_id,)).fetchone()
    if found is None:
        return None
    if known is not None and known[0] == found[0]:
        return Versioned(known[1], found[0])
    data = conn.execute("SELECT profile_json FROM agent_profiles WHERE id = ?", (agent_id,))
    return Versioned(
        decode(AgentProfile, data.fetchone()[0], f"agent_profiles/{agent_id}"), found[0]
    )


EVENT_COLUMNS = "agent_id, key, seq, kind, payload, payload_hash, result, lines, at"


def event_from_row(row: tuple[object, ...]) -> OracleEvent:
    """An ``OracleEvent`` from a row of ``oracle_events``."""
    names = EVENT_COLUMNS.split(", ")
    values = dict(zip(names, row, strict=True))
    key = f"oracle_events/{values['agent_id']}/{values['key']}"
    for name in ("payload", "result", "lines"):
        values[name] = loads(str(values[name]), key)
    return decode(OracleEvent, json.dumps(values), key)


def get_event(conn: sqlite3.Connection, agent_id: str, key: str) -> OracleEvent | None:
    """The agent's event with this idempotency key."""
    found = conn.execute(
        f"SELECT {EVENT_COLUMNS} FROM oracle_events WHERE agent_id = ? AND key = ?",
        (agent_id, key),
    ).fetchone()
    return None if found is None else event_from_row(found)


def write_profile(
    conn: sqlite3.Connection, profile: AgentProfile, revision: int, previous: AgentProfile | None
) -> None:
    """Upsert the profile row, and the specialization and achievement rows that changed
    since ``previous`` (all of them when it is not known)."""
    write_profiles(conn, [(profile, revision, previous)])


Written = tuple[AgentProfile, int, AgentProfile | None]
"""A profile to write: the profile, its new revision, and the profile it replaces."""


def write_profiles(conn: sqlite3.Connection, written: Sequence[Written]) -> None:
    """``write_profile`` for each, in three statements for all of them."""
    conn.executemany(
        "INSERT INTO agent_profiles (id, provider, model, xp, level, total_tasks,"
        " total_xp_earned, total_cost, average_score, success_rate, revision, profile_json)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (id) DO UPDATE SET"
        " provider = excluded.provider, model = excluded.model, xp = excluded.xp,"
        " level = excluded.level, total_tasks = excluded.total_tasks,"
        " total_xp_earned = excluded.total_xp_earned, total_cost = excluded.total_cost,"
        " average_score = excluded.average_score, success_rate = excluded.success_rate,"
        " revision = excluded.revision, profile_json = excluded.profile_json,"
        " updated_at = CURRENT_TIMESTAMP",
        [
            (
                p.id, p.provider, p.model, p.xp, p.level.value, p.stats.total_tasks,
                p.stats.total_xp_earned, p.stats.total_cost_incurred, p.stats.average_score,
                p.stats.success_rate, revision, p.model_dump_json(),
            )
            for p, revision, _ in written
        ],
    )  # fmt: skip
    conn.executemany(
        "INSERT INTO specializations (agent_id, task_type, xp, level, tasks_completed,"
        " avg_score, best_score, current_streak, tasks_judged) VALUES (?,?,?,?,?,?,?,?,?)"
        " ON CONFLICT (agent_id, task_type) DO UPDATE SET xp = excluded.xp,"
        " level = excluded.level, tasks_completed = excluded.tasks_completed,"
        " avg_score = excluded.avg_score, best_score = excluded.best_score,"
        " current_streak = excluded.current_streak, tasks_judged = excluded.tasks_judged",
        [
            (profile.id, task_type, sp.xp, sp.level.value, sp.tasks_completed, sp.avg_score,
             sp.best_score, sp.current_streak, sp.tasks_judged)
            for profile, _, previous in written
            for task_type, sp in profile.specializations.items()
            if previous is None or previous.specializations.get(task_type) != sp
        ],
    )  # fmt: skip
    conn.executemany(
        "INSERT OR IGNORE INTO achievements (agent_id, achievement, awarded_at, xp)"
        " VALUES (?,?,?,?)",
        [
            (profile.id, a.name, a.awarded_at, a.xp)
            for profile, _, previous in written
            for a in profile.achievements[0 if previous is None else len(previous.achievements) :]
        ],
    )


def commit_oracle(
    conn: sqlite3.Connection,
    commit: OracleCommit,
    expected: int,
    previous: AgentProfile | None = None,
) -> int:
    """Append the event and its ledger lines and replace the profile, in one transaction.

    The profile's revision counts its events, so the event's per-agent ``seq`` is the
    new revision. The event's primary key (agent_id, key) refuses a repeated key.
    ``previous``: the profile at ``expected``, read in this transaction (then the
    revision is not checked again and only changed rows are written).
    """
    event = commit.event
    revision = expected + 1
    try:
        conn.execute(
            f"INSERT INTO oracle_events ({EVENT_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?)",
            (
                event.agent_id, event.key, revision, event.kind.value,
                json.dumps(event.payload), event.payload_hash, json.dumps(event.result),
                json.dumps([{"event": ln.event, "xp": ln.xp} for ln in event.lines]), event.at,
            ),
        )  # fmt: skip
    except sqlite3.IntegrityError:
        existing = get_event(conn, event.agent_id, event.key)
        if existing is not None:
            raise AlreadyApplied(f"{event.agent_id}/{event.key}", existing) from None
        raise _conflict(conn, event.agent_id, expected) from None
    if previous is None:
        found = conn.execute(
            "SELECT revision FROM agent_profiles WHERE id = ?", (event.agent_id,)
        ).fetchone()
        if (0 if found is None else int(found[0])) != expected:
            raise _conflict(conn, event.agent_id, expected)
    write_profile(conn, commit.profile, revision, previous)
    contract_id = str(event.payload.get("contract_id", event.key))
    conn.executemany(
        "INSERT INTO xp_history (agent_id, event, xp_awarded, contract_id, timestamp)"
        " VALUES (?,?,?,?,?)",
        [(event.agent_id, ln.event, ln.xp, contract_id, event.at) for ln in event.lines],
    )
    return revision


def _conflict(conn: sqlite3.Connection, agent_id: str, expected: int) -> RevisionConflict:
    found = conn.execute("SELECT revision FROM agent_profiles WHERE id = ?", (agent_id,)).fetchone()
    return RevisionConflict(agent_id, expected, 0 if found is None else int(found[0]))


def ledger_entry(row: tuple[object, ...]) -> LedgerEntry:
    """A ``LedgerEntry`` from a row of ``xp_history``."""
    keys = ("id", "agent_id", "event", "xp_awarded", "contract_id", "timestamp")
    return LedgerEntry.model_validate(dict(zip(keys, row, strict=True)))


def leaderboard(
    conn: sqlite3.Connection, task_type: str | None, limit: int
) -> list[LeaderboardRow]:
    """Top profiles from the leaderboard indexes, overall or for one task type."""
    base = "p.id, p.provider, p.model, p.xp, p.level, p.total_tasks, p.average_score"
    if task_type is None:
        rows = conn.execute(
            f"SELECT {base} FROM agent_profiles p"
            " ORDER BY p.xp DESC, p.average_score DESC, p.id LIMIT ?",
            (limit,),
        ).fetchall()
    else:
        rows = conn.execute(
            f"SELECT {base}, s.xp, s.level, s.tasks_judged, s.avg_score, s.best_score"
            " FROM specializations s JOIN agent_profiles p ON p.id = s.agent_id"
            " WHERE s.task_type = ? ORDER BY s.xp DESC, s.avg_score DESC, s.agent_id LIMIT ?",
            (task_type, limit),
        ).fetchall()
    keys = ["agent_id", "provider", "model", "xp", "level", "tasks", "average_score"]
    if task_type is not None:
        keys += [
            "specialization_xp", "specialization_level", "specialization_tasks",
            "specialization_avg_score", "specialization_best_score",
        ]  # fmt: skip
    out = []
    for position, row in enumerate(rows, start=1):
        values: dict[str, object] = dict(zip(keys, row, strict=True))
        out.append(
            LeaderboardRow.model_validate({**values, "position": position, "task_type": task_type})
        )
    return out


def renew_lease(conn: sqlite3.Connection, holder: str, expires_at: float) -> None:
    """Insert or extend ``holder``'s lease; leases ended an hour ago are deleted."""
    conn.execute(
        "INSERT INTO leases (holder, expires_at) VALUES (?, ?)"
        " ON CONFLICT (holder) DO UPDATE SET expires_at = excluded.expires_at",
        (holder, expires_at),
    )
    conn.execute("DELETE FROM leases WHERE expires_at < ?", (expires_at - LEASE_KEPT_S,))


def live_leases(conn: sqlite3.Connection, now: float) -> frozenset[str]:
    """The holders whose lease runs past ``now``."""
    rows = conn.execute("SELECT holder FROM leases WHERE expires_at > ?", (now,))
    return frozenset(holder for (holder,) in rows)


def run_read(conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T]) -> T:
    """Run a read in a deferred transaction, so it sees one snapshot."""
    conn.execute("BEGIN")
    try:
        return fn(conn)
    finally:
        conn.execute("COMMIT")


def add_spend(conn: sqlite3.Connection, charges: Mapping[tuple[str, str], int]) -> None:
    """Add each charge to its (client, period) row, created at 0 when absent."""
    conn.executemany(
        "INSERT INTO client_spend (client, period, nano_usd) VALUES (?, ?, ?)"
        " ON CONFLICT (client, period) DO UPDATE SET nano_usd = nano_usd + excluded.nano_usd",
        [(client, period, nano) for (client, period), nano in charges.items()],
    )


def get_spend(
    conn: sqlite3.Connection, keys: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], int]:
    """The (client, period) rows of ``keys`` that exist."""
    found: dict[tuple[str, str], int] = {}
    for client, period in keys:
        row = conn.execute(
            "SELECT nano_usd FROM client_spend WHERE client = ? AND period = ?", (client, period)
        ).fetchone()
        if row is not None:
            found[client, period] = int(row[0])
    return found


def reserve_spend(conn: sqlite3.Connection, hold: Hold, limit_usd: float, now: float) -> Reserved:
    """Drop the key's expired holds, read its spend and holds in force, add ``hold`` when
    granted (``domain.budget.refusal``): in the writer's transaction, so atomic."""
    client, period = hold.key
    conn.execute(
        "DELETE FROM client_holds WHERE client = ? AND period = ? AND expires_at <= ?",
        (client, period, now),
    )
    row = conn.execute(
        "SELECT nano_usd FROM client_spend WHERE client = ? AND period = ?", (client, period)
    ).fetchone()
    spent = 0 if row is None else int(row[0])
    (held,) = conn.execute(
        "SELECT COALESCE(SUM(nano_usd), 0) FROM client_holds WHERE client = ? AND period = ?",
        (client, period),
    ).fetchone()
    refused = refusal(spent, int(held), hold.nano, limit_usd)
    if refused is None:
        conn.execute(
            "INSERT INTO client_holds (client, period, id, nano_usd, expires_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (client, period, hold.id, hold.nano, hold.expires_at),
        )
    return Reserved(refused, spent, int(held))


def release_spend(conn: sqlite3.Connection, hold: Hold) -> None:
    """Drop ``hold``."""
    conn.execute(
        "DELETE FROM client_holds WHERE client = ? AND period = ? AND id = ?", (*hold.key, hold.id)
    )
