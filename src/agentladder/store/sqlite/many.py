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

from agentladder.domain.profile import AgentProfile
from agentladder.store.base import OracleApplied, OracleItem
from agentladder.store.records import OracleEvent, Versioned
from agentladder.store.sqlite import ops

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
    ``known``: profiles by agent as (revision, profile) that need no decoding."""
    agents: dict[str, _Agent] = {}
    fresh: dict[tuple[str, str], OracleEvent] = {}
    outcomes: list[OracleApplied | None] = []
    events: list[tuple[object, ...]] = []
    lines: list[tuple[object, ...]] = []
    for agent_id, key, fold in items:
        agent = agents.get(agent_id)
        if agent is None:
            found: Versioned[AgentProfile] | None = ops.get_profile(
                conn, agent_id, known.get(agent_id)
            )
            value = None if found is None else found.value
            agent = agents[agent_id] = _Agent(value, value, 0 if found is None else found.revision)
        if agent.current is not None:
            stored = fresh.get((agent_id, key)) or ops.get_event(conn, agent_id, key)
            if stored is not None:
                outcomes.append(OracleApplied(stored, agent.current, created=False))
                continue
        commit = fold(agent.current)
        if commit is None:
            outcomes.append(None)
            continue
        event = commit.event.model_copy(update={"seq": agent.revision + 1})
        agent.revision += 1
        agent.current = commit.profile
        agent.changed = True
        fresh[(agent_id, key)] = event
        events.append(
            (
                event.agent_id, event.key, event.seq, event.kind.value,
                json.dumps(event.payload), event.payload_hash, json.dumps(event.result),
                json.dumps([line.model_dump() for line in event.lines]), event.at,
            )
        )  # fmt: skip
        contract_id = str(event.payload.get("contract_id", event.key))
        lines.extend((event.agent_id, ln.event, ln.xp, contract_id, event.at) for ln in event.lines)
        outcomes.append(OracleApplied(event, commit.profile, created=True))
    conn.executemany(_INSERT_EVENT, events)
    profiles: dict[str, tuple[int, AgentProfile]] = {}
    for agent_id, agent in agents.items():
        if agent.changed and agent.current is not None:
            ops.write_profile(conn, agent.current, agent.revision, agent.start)
            profiles[agent_id] = (agent.revision, agent.current)
    conn.executemany(_INSERT_LINE, lines)
    return Written(outcomes, profiles)
