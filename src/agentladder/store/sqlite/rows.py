"""Rows read by key, and stored rows turned into records (the SQLite store's helpers)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

import pydantic_core

from agentladder.domain.registry import status_within
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.store.codec import decode
from agentladder.store.listing import agent_json, listing_body, registration_parts
from agentladder.store.records import DeliberationDoc, Registration
from agentladder.store.sqlite.directory import registration_filter

__all__ = [
    "MANY",
    "deliberation_from_row",
    "encode_document",
    "finish_listing",
    "joined_body",
    "rows_in",
    "where_registrations",
]

MANY = 500
"""Keys per ``IN (...)`` query of the ``get_many_*`` reads (SQLite limits parameters)."""


def joined_body(joined: str | None) -> bytes:
    """``{"agents":[...]}`` around the objects SQLite joined (None: no agent)."""
    return listing_body(() if joined is None else (joined,))


def finish_listing(
    conn: sqlite3.Connection, agents: Sequence[str], now: float, online_window_s: float
) -> dict[str, str]:
    """The objects ``LISTING`` could not build, from the decoded registration and stats
    (``CorruptRecord`` naming the value that cannot be decoded)."""
    stats = {
        agent: decode(AgentPerformanceStats, data, f"rank_stats/{agent}")
        for agent, data in rows_in(
            conn, "SELECT agent_id, stats_json FROM rank_stats", "agent_id", agents
        )
    }
    finished = {}
    for agent, doc in rows_in(conn, "SELECT agent_id, doc FROM registrations", "agent_id", agents):
        registration = decode(Registration, doc, f"registrations/{agent}")
        status = status_within(registration.last_seen, now, online_window_s)
        found = stats.get(agent)
        stats_json = None if found is None else found.model_dump_json()
        finished[agent] = agent_json(registration_parts(registration), status, stats_json)
    return finished


def encode_document(body: dict[str, Any]) -> str:
    """A document's JSON text: pydantic-core's encoder (about five times faster than
    ``json.dumps`` on a completed deliberation); ``json.dumps`` for what it refuses (a
    string holding a lone surrogate), so that every document stays storable."""
    try:
        return pydantic_core.to_json(body, ensure_ascii=True).decode("ascii")
    except pydantic_core.PydanticSerializationError:
        return json.dumps(body)


def rows_in(
    conn: sqlite3.Connection, select: str, column: str, keys: Sequence[str]
) -> list[tuple[Any, ...]]:
    """The rows of ``select`` whose ``column`` is one of ``keys`` (in chunks of ``MANY``)."""
    rows: list[tuple[Any, ...]] = []
    for start in range(0, len(keys), MANY):
        chunk = keys[start : start + MANY]
        marks = ",".join("?" * len(chunk))
        rows.extend(conn.execute(f"{select} WHERE {column} IN ({marks})", chunk))
    return rows


def where_registrations(tag: str | None, provider: str | None) -> tuple[str, tuple[str, ...]]:
    """The WHERE clause of the directory's filters, evaluated by SQLite on the stored JSON."""
    clauses, args = registration_filter(tag, provider)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), tuple(args)


def deliberation_from_row(row: tuple[str, str, float, str]) -> DeliberationDoc:
    identifier, status, created_at, body = row
    return decode(
        DeliberationDoc,
        json.dumps(
            {"id": identifier, "status": status, "created_at": created_at, "body": json.loads(body)}
        ),
        f"deliberations/{identifier}",
    )
