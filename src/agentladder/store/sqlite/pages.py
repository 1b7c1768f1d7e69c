"""Pages of every agent's events, ledger lines and deliberation records, by position.

An export reads a store one page at a time (``Store.events_after`` and its kin): each
page starts where the last one ended, on the table's rowid (or ``xp_history.id``), so a
page costs the same at the start of a large table as at its end, and a row written while
the pages are read is met once, at its place.
"""

from __future__ import annotations

import sqlite3

from agentladder.store.base import LedgerEntry
from agentladder.store.records import DeliberationDoc, OracleEvent
from agentladder.store.sqlite.ops import EVENT_COLUMNS, event_from_row, ledger_entry
from agentladder.store.sqlite.rows import deliberation_from_row

__all__ = ["deliberations_after", "events_after", "ledger_after"]


def events_after(conn: sqlite3.Connection, after: int, limit: int) -> list[tuple[int, OracleEvent]]:
    """Up to ``limit`` events with a rowid above ``after`` (rowids grow as events are
    appended), with their rowids."""
    rows = conn.execute(
        f"SELECT rowid, {EVENT_COLUMNS} FROM oracle_events WHERE rowid > ? ORDER BY rowid LIMIT ?",
        (after, limit),
    )
    return [(int(row[0]), event_from_row(row[1:])) for row in rows]


def ledger_after(conn: sqlite3.Connection, after: int, limit: int) -> list[LedgerEntry]:
    """Up to ``limit`` xp_history lines with an id above ``after``, by id."""
    rows = conn.execute(
        "SELECT id, agent_id, event, xp_awarded, contract_id, timestamp FROM xp_history"
        " WHERE id > ? ORDER BY id LIMIT ?",
        (after, limit),
    )
    return [ledger_entry(row) for row in rows]


def deliberations_after(
    conn: sqlite3.Connection, after: int, limit: int
) -> list[tuple[int, DeliberationDoc]]:
    """Up to ``limit`` records with a rowid above ``after``, with their rowids (a record's
    rowid is given when it is created; its updates keep it)."""
    rows = conn.execute(
        "SELECT rowid, id, status, created_at, doc FROM deliberations WHERE rowid > ?"
        " ORDER BY rowid LIMIT ?",
        (after, limit),
    )
    return [(int(row[0]), deliberation_from_row(row[1:])) for row in rows]
