"""The SQLite schema, as numbered migrations recorded in the database.

The level-up specification's four tables keep exactly its names and columns
(``agent_profiles``, ``specializations``, ``achievements``, ``xp_history``); agentladder adds
columns to them (revisions, the profile as JSON, extra counters) and its own tables: rank
stats, ranking markers, Oracle events (judgments and other events, the idempotency keys),
registrations and deliberations.

A migration is a script of SQL statements and, for some, a function run after it in the
same transaction (``BACKFILLS``: values computed in Python from existing rows).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from agentladder.errors import CorruptRecord
from agentladder.store.codec import decode
from agentladder.store.listing import registration_parts
from agentladder.store.records import Registration

__all__ = ["BACKFILLS", "MIGRATIONS", "migrate"]

_V1 = """
CREATE TABLE agent_profiles (
  id TEXT PRIMARY KEY,
  provider TEXT NOT NULL,
  model TEXT NOT NULL,
  xp INTEGER DEFAULT 0,
  level TEXT DEFAULT 'rookie',
  total_tasks INTEGER DEFAULT 0,
  total_xp_earned INTEGER DEFAULT 0,
  total_cost REAL DEFAULT 0,
  average_score REAL DEFAULT 0,
  success_rate REAL DEFAULT 0,
  created_at TEXT DEFAULT CURRENT_TIMESTAMP,
  updated_at TEXT DEFAULT CURRENT_TIMESTAMP,
  revision INTEGER NOT NULL DEFAULT 1,
  profile_json TEXT NOT NULL
);
CREATE INDEX agent_profiles_leaderboard ON agent_profiles (xp DESC, average_score DESC, id);

CREATE TABLE specializations (
  agent_id TEXT,
  task_type TEXT,
  xp INTEGER DEFAULT 0,
  level TEXT DEFAULT 'rookie',
  tasks_completed INTEGER DEFAULT 0,
  avg_score REAL DEFAULT 0,
  best_score REAL DEFAULT 0,
  current_streak INTEGER DEFAULT 0,
  tasks_judged INTEGER DEFAULT 0,
  PRIMARY KEY (agent_id, task_type),
  FOREIGN KEY (agent_id) REFERENCES agent_profiles(id)
);
CREATE INDEX specializations_leaderboard
  ON specializations (task_type, xp DESC, avg_score DESC, agent_id);

CREATE TABLE achievements (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  agent_id TEXT,
  achievement TEXT,
  awarded_at TEXT DEFAULT CURRENT_TIMESTAMP,
  xp INTEGER DEFAULT 0,
  FOREIGN KEY (agent_id) REFERENCES agent_profiles(id)
);
CREATE UNIQUE INDEX achievements_once ON achievements (agent_id, achievement);

CREATE TABLE xp_history (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  agent_id TEXT,
  event TEXT,
  xp_awarded INTEGER,
  contract_id TEXT,
  timestamp TEXT DEFAULT CURRENT_TIMESTAMP,
  FOREIGN KEY (agent_id) REFERENCES agent_profiles(id)
);
CREATE INDEX xp_history_agent ON xp_history (agent_id, id);

CREATE TABLE oracle_events (
  agent_id TEXT NOT NULL,
  key TEXT NOT NULL,
  seq INTEGER NOT NULL,
  kind TEXT NOT NULL,
  payload TEXT NOT NULL,
  payload_hash TEXT NOT NULL,
  result TEXT NOT NULL,
  lines TEXT NOT NULL,
  at TEXT NOT NULL,
  PRIMARY KEY (agent_id, seq),
  UNIQUE (agent_id, key)
) WITHOUT ROWID;

CREATE TABLE rank_stats (
  agent_id TEXT PRIMARY KEY,
  revision INTEGER NOT NULL,
  rank INTEGER NOT NULL,
  stats_json TEXT NOT NULL
);

CREATE TABLE ranking_markers (
  marker TEXT PRIMARY KEY,
  applied_at TEXT DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE registrations (
  agent_id TEXT PRIMARY KEY,
  last_seen REAL NOT NULL,
  doc TEXT NOT NULL
);

CREATE TABLE deliberations (
  id TEXT PRIMARY KEY,
  status TEXT NOT NULL,
  created_at REAL NOT NULL,
  doc TEXT NOT NULL
);
CREATE INDEX deliberations_newest ON deliberations (created_at DESC, id);
"""

_V2 = """
CREATE INDEX deliberations_status ON deliberations (status, created_at DESC, id);
"""

# The Oracle's events as a rowid table with one unique index on the idempotency key.
# Version 1's WITHOUT ROWID table kept its rows (about 1 KB: input, result, lines) in
# index-format pages, where a row that large spills into overflow pages and lands in the
# middle of the tree: about four dirty pages per award. Appended rows share the table's
# last page, and the one index answers both the idempotency lookup and an agent's events
# (sorted by seq). seq stays unique per agent: it is the profile's revision plus one,
# read and written under the file's write lock (BEGIN IMMEDIATE).
_V3 = """
CREATE TABLE oracle_events_appended (
  agent_id TEXT NOT NULL,
  key TEXT NOT NULL,
  seq INTEGER NOT NULL,
  kind TEXT NOT NULL,
  payload TEXT NOT NULL,
  payload_hash TEXT NOT NULL,
  result TEXT NOT NULL,
  lines TEXT NOT NULL,
  at TEXT NOT NULL
);
INSERT INTO oracle_events_appended
  SELECT agent_id, key, seq, kind, payload, payload_hash, result, lines, at FROM oracle_events
  ORDER BY agent_id, seq;
DROP TABLE oracle_events;
ALTER TABLE oracle_events_appended RENAME TO oracle_events;
CREATE UNIQUE INDEX oracle_events_key ON oracle_events (agent_id, key);
"""

# Each registration keeps the parts of its GET /agents object that depend on it alone
# (``store.listing.registration_parts``), written with the registration in the same
# statement; the listing is then one query. The trigger keeps a writer that does not know
# these columns (an older agentladder on the same file) from leaving them stale: a doc
# changed without them clears them, and the listing builds that agent's object from its
# doc until its next write.
_V4 = """
ALTER TABLE registrations ADD COLUMN listing_head TEXT;
ALTER TABLE registrations ADD COLUMN listing_tail TEXT;
CREATE TRIGGER registrations_listing_stale AFTER UPDATE OF doc ON registrations
  WHEN NEW.doc IS NOT OLD.doc
    AND NEW.listing_head IS OLD.listing_head AND NEW.listing_tail IS OLD.listing_tail
BEGIN
  UPDATE registrations SET listing_head = NULL, listing_tail = NULL
  WHERE agent_id = NEW.agent_id;
END;
"""


# The evidence model (docs/skill.md): one ordered log of skill events (seq is the log's
# order, from 1, without gaps: one writer appends) and the state each event left, one row
# per agent and one for the fleet (agent_id '=fleet', which no agent id can be).
_V6 = """
CREATE TABLE skill_events (
    seq INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    payload_hash TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE TABLE skill_states (
    agent_id TEXT PRIMARY KEY,
    state_json TEXT NOT NULL,
    seq INTEGER NOT NULL
);
"""


def _backfill_listing_parts(conn: sqlite3.Connection) -> None:
    """Migration 4's parts for the registrations already stored. A doc that cannot be
    decoded keeps none: the listing then fails on it naming it, as it did before."""
    for agent, doc in conn.execute("SELECT agent_id, doc FROM registrations").fetchall():
        try:
            registration = decode(Registration, doc, f"registrations/{agent}")
        except CorruptRecord:
            continue
        conn.execute(
            "UPDATE registrations SET listing_head = ?, listing_tail = ? WHERE agent_id = ?",
            (*registration_parts(registration), agent),
        )


# Each running service instance renews a lease; a deliberation whose instance's lease ran
# out is abandoned (services/deliberations/recovery.py).
_V5 = """
CREATE TABLE leases (
  holder TEXT PRIMARY KEY,
  expires_at REAL NOT NULL
);
"""

# Which agents took part in each deliberation: an agent's deliberations, newest first, in
# one index range (the dashboard's agent page), instead of decoding every record.
_V7 = """
CREATE TABLE deliberation_agents (
  agent_id TEXT NOT NULL,
  created_at REAL NOT NULL,
  deliberation_id TEXT NOT NULL,
  PRIMARY KEY (agent_id, created_at DESC, deliberation_id)
) WITHOUT ROWID;
CREATE INDEX deliberation_agents_of ON deliberation_agents (deliberation_id);
"""

_V8 = """
CREATE TABLE gateway_served (
  contract_id TEXT PRIMARY KEY,
  at REAL NOT NULL,
  doc TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX gateway_served_at ON gateway_served (at);
"""

# What the gateway's clients spent, per client and period key, in nano-dollars
# (store/spend.py): one row each, added to by an UPSERT.
_V9 = """
CREATE TABLE client_spend (
  client TEXT NOT NULL,
  period TEXT NOT NULL,
  nano_usd INTEGER NOT NULL,
  PRIMARY KEY (client, period)
) WITHOUT ROWID;
"""

# The gateway's pending checks (store/checks.py): kept from the answer until the check's
# judgment and verdict are stored; ``revision`` for compare-and-set.
_V10 = """
CREATE TABLE gateway_checks (
  contract_id TEXT PRIMARY KEY,
  at REAL NOT NULL,
  revision INTEGER NOT NULL,
  doc TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX gateway_checks_at ON gateway_checks (at);
"""

# The money held for budgeted clients' requests in flight (store/spend.py): one row per
# request until it is settled or released, counted until ``expires_at`` (epoch seconds).
_V11 = """
CREATE TABLE client_holds (
  client TEXT NOT NULL,
  period TEXT NOT NULL,
  id TEXT NOT NULL,
  nano_usd INTEGER NOT NULL,
  expires_at REAL NOT NULL,
  PRIMARY KEY (client, period, id)
) WITHOUT ROWID;
"""

# The client request id each answered request was asked with (store/served.py), so an
# imported log's model calls find their answers (Store.find_served); older rows: null.
_V12 = """
ALTER TABLE gateway_served ADD COLUMN request_id TEXT;
CREATE INDEX gateway_served_request ON gateway_served (request_id, at)
  WHERE request_id IS NOT NULL;
"""


def _backfill_deliberation_agents(conn: sqlite3.Connection) -> None:
    """The agents of the deliberations already stored (a record that is not JSON, or has
    no list of agents, adds none)."""
    conn.execute(
        "INSERT OR IGNORE INTO deliberation_agents (agent_id, created_at, deliberation_id)"
        " SELECT a.value, d.created_at, d.id FROM deliberations AS d,"
        " json_each(CASE WHEN json_valid(d.doc) AND json_type(d.doc, '$.agents') = 'array'"
        " THEN json_extract(d.doc, '$.agents') ELSE '[]' END) AS a WHERE a.type = 'text'"
    )


MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (1, "initial schema", _V1),
    (2, "deliberations by status (recovery after a restart)", _V2),
    (3, "oracle_events appended, one index on (agent_id, key)", _V3),
    (4, "registrations keep their listing parts", _V4),
    (5, "leases of the service instances (recovery of abandoned deliberations)", _V5),
    (6, "the evidence model: skill events and states", _V6),
    (7, "the agents of each deliberation (an agent's deliberations)", _V7),
    (8, "the gateway's answered requests (feedback finds the agent)", _V8),
    (9, "the gateway clients' spend per period (budgets)", _V9),
    (10, "the gateway's pending checks (a check survives a crash)", _V10),
    (11, "the money held for budgeted clients' requests in flight", _V11),
    (12, "the client request id of each answered request (imported logs find it)", _V12),
)

BACKFILLS: dict[int, Callable[[sqlite3.Connection], None]] = {
    4: _backfill_listing_parts,
    7: _backfill_deliberation_agents,
}
"""Run after their migration's script, in its transaction."""


def _statements(script: str) -> list[str]:
    """The statements of ``script`` (a trigger's body keeps its own semicolons)."""
    statements, pending = [], ""
    for piece in script.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.rstrip(";").strip():
                statements.append(pending)
            pending = ""
    return statements


def migrate(conn: sqlite3.Connection) -> list[int]:
    """Apply every migration the database lacks, each in its own transaction.

    Safe when several processes open the same new file at once: the check and the
    migration run under one write lock (BEGIN IMMEDIATE). Returns the versions applied.
    """
    applied: list[int] = []
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
        " applied_at TEXT DEFAULT CURRENT_TIMESTAMP)"
    )
    for version, name, script in MIGRATIONS:
        conn.execute("BEGIN IMMEDIATE")
        try:
            done = conn.execute(
                "SELECT 1 FROM schema_migrations WHERE version = ?", (version,)
            ).fetchone()
            if done is None:
                for statement in _statements(script):
                    conn.execute(statement)
                if version in BACKFILLS:
                    BACKFILLS[version](conn)
                conn.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES (?, ?)", (version, name)
                )
                applied.append(version)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return applied
