"""Many Oracle events in one job of the writer (``SqliteStore.apply_oracle_many``).

Each event is written as ``ops.commit_oracle`` writes one: its row in ``oracle_events``
under its own key and ``seq``, its ledger lines. Only the profile rows are written once
per agent, at the end: inside one transaction nobody sees the ones in between, and the
last one (its revision the count of the agent's events) is what one write each would
have left.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from agentladder.domain.frozen import replaced
from agentladder.domain.profile import AgentProfile
from agentladder.store.base import OracleApplied, OracleItem
from agentladder.store.records import OracleEvent, Versioned
from agentladder.store.sqlite import ops
from agentladder.store.sqlite.rows import MANY, rows_in

__all__ = ["Written", "apply_many"]

_INSERT_EVENT = (
    "INSERT INTO oracle_events (agent_id, key, seq, kind, payload, payload_hash, result,"
    " lines, at) VALUES (?,?,?,?,?,?,?,?,?)"
)
_INSERT_LINE = (
    "INSERT INTO xp_history (agent_id, event, xp_awarded, contract_id, timestamp)"
    " VALUES (?,?,?,?,?)"
)


@dataclass(slots=True)
class _Agent:
    start: AgentProfile | None  # as stored before this job
    current: AgentProfile | None
    revision: int
    changed: bool = False


@dataclass(frozen=True, slots=True)
class Written:
    """What a job of ``apply_many`` leaves: the outcomes, and each changed agent's profile
    at its new revision (for the store's cache of profiles)."""

    outcomes: list[OracleApplied | None]
    profiles: dict[str, tuple[int, AgentProfile]]


def apply_many(
    conn: sqlite3.Connection,
    items: Sequence[OracleItem],
    known: dict[str, tuple[int, AgentProfile]],
) -> Written:
    """Check, fold and write every item in order, inside the writer's transaction.
    ``known``: profiles by agent as (revision, profile) that need no decoding. The
    profiles and the keys already stored are read in a few statements for all items, and
    the rows are written in one statement per table."""
    found = _profiles(conn, list(dict.fromkeys(agent_id for agent_id, _, _ in items)), known)
    stored_keys = _stored_keys(conn, [(a, k) for a, k, _ in items if a in found])
    agents: dict[str, _Agent] = {}
    fresh: dict[tuple[str, str], OracleEvent] = {}
    outcomes: list[OracleApplied | None] = []
    events: list[tuple[object, ...]] = []
    lines: list[tuple[object, ...]] = []
    for agent_id, key, fold in items:
        agent = agents.get(agent_id)
        if agent is None:
            held = found.get(agent_id)
            value = None if held is None else held.value
            agent = agents[agent_id] = _Agent(value, value, 0 if held is None else held.revision)
        if agent.current is not None:
            stored = fresh.get((agent_id, key))
            if stored is None and (agent_id, key) in stored_keys:
                stored = ops.get_event(conn, agent_id, key)
            if stored is not None:
                outcomes.append(OracleApplied(stored, agent.current, created=False))
                continue
        commit = fold(agent.current)
        if commit is None:
            outcomes.append(None)
            continue
        event = replaced(commit.event, seq=agent.revision + 1)
        agent.revision += 1
        agent.current = commit.profile
        agent.changed = True
        fresh[(agent_id, key)] = event
        events.append(
            (
                event.agent_id, event.key, event.seq, event.kind.value,
                json.dumps(event.payload), event.payload_hash, json.dumps(event.result),
                json.dumps([{"event": ln.event, "xp": ln.xp} for ln in event.lines]), event.at,
            )
        )  # fmt: skip
        contract_id = str(event.payload.get("contract_id", event.key))
        lines.extend((event.agent_id, ln.event, ln.xp, contract_id, event.at) for ln in event.lines)
        outcomes.append(OracleApplied(event, commit.profile, created=True))
    conn.executemany(_INSERT_EVENT, events)
    profiles: dict[str, tuple[int, AgentProfile]] = {}
    written: list[ops.Written] = []
    for agent_id, agent in agents.items():
        if agent.changed and agent.current is not None:
            written.append((agent.current, agent.revision, agent.start))
            profiles[agent_id] = (agent.revision, agent.current)
    ops.write_profiles(conn, written)
    conn.executemany(_INSERT_LINE, lines)
    return Written(outcomes, profiles)


_PAIRS = MANY // 2
"""(agent_id, key) pairs looked up in one statement (two values bound each)."""


def _profiles(
    conn: sqlite3.Connection, agent_ids: list[str], known: dict[str, tuple[int, AgentProfile]]
) -> dict[str, Versioned[AgentProfile]]:
    """The stored profiles of ``agent_ids`` (those that have one): the revisions read in
    one statement per ``rows.MANY``, a profile decoded only where ``known`` lacks that
    revision."""
    out: dict[str, Versioned[AgentProfile]] = {}
    stale: list[str] = []
    for agent_id, revision in rows_in(
        conn, "SELECT id, revision FROM agent_profiles", "id", agent_ids
    ):
        cached = known.get(agent_id)
        if cached is not None and cached[0] == revision:
            out[agent_id] = Versioned(cached[1], revision)
        else:
            stale.append(agent_id)
    for agent_id in stale:
        profile = ops.get_profile(conn, agent_id)
        if profile is not None:
            out[agent_id] = profile
    return out


def _stored_keys(conn: sqlite3.Connection, pairs: list[tuple[str, str]]) -> set[tuple[str, str]]:
    """Which of the (agent_id, key) pairs have an event stored, in one statement per
    ``_PAIRS`` pairs (each a lookup in the (agent_id, key) index)."""
    found: set[tuple[str, str]] = set()
    for first in range(0, len(pairs), _PAIRS):
        chunk = pairs[first : first + _PAIRS]
        values = ",".join(["(?,?)"] * len(chunk))
        rows = conn.execute(
            f"WITH wanted (agent_id, key) AS (VALUES {values}) SELECT e.agent_id, e.key"
            " FROM wanted JOIN oracle_events e ON e.agent_id = wanted.agent_id"
            " AND e.key = wanted.key",
            [value for pair in chunk for value in pair],
        )
        found.update((str(agent_id), str(key)) for agent_id, key in rows)
    return found
