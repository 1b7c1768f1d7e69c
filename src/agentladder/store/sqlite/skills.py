"""The evidence model's log and states in SQLite (tables of migration 6).

An event, the states it changes and the fleet's are written by one job of the writer, in
one transaction: all or nothing, and no conflict is possible while it holds the lock.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Sequence

from agentladder.domain.frozen import replaced
from agentladder.domain.skill.state import AGENT_SKILL, FLEET, FLEET_SKILL, AgentSkill, FleetSkill
from agentladder.store.base import SkillItem
from agentladder.store.codec import decode_as
from agentladder.store.lru import Lru
from agentladder.store.skills import FitFold, SkillApplied, SkillEvent, SkillFold, decode_state
from agentladder.store.sqlite.connections import SqliteFile
from agentladder.store.sqlite.rows import rows_in

__all__ = ["SqliteSkills"]

FIT_GROUP = 500
"""States a fit's commit makes and writes at a time."""
_EVENT = "SELECT seq, key, kind, payload, payload_hash, at FROM skill_events"
_UPSERT_STATE = (
    "INSERT INTO skill_states (agent_id, state_json, seq) VALUES (?,?,?)"
    " ON CONFLICT (agent_id) DO UPDATE SET state_json = excluded.state_json, seq = excluded.seq"
)


def _event(row: tuple[int, str, str, str, str, float]) -> SkillEvent:
    seq, key, kind, payload, payload_hash, at = row
    return SkillEvent(
        seq=seq, key=key, kind=kind, payload=payload, payload_hash=payload_hash, at=at
    )


def _states(conn: sqlite3.Connection, agents: Sequence[str]) -> dict[str, AgentSkill]:
    found = {}
    for agent, data in rows_in(
        conn, "SELECT agent_id, state_json FROM skill_states", "agent_id", agents
    ):
        state = decode_state(data, f"skill_states/{agent}")
        if state is not None:
            found[agent] = state
    return found


Decoded = Lru[str, tuple[str, AgentSkill]]
"""Skill states as last written or read here: agent id -> (the stored JSON text, its
state). An entry is used only for the same text: whatever wrote the row since (another
process's event or fit included) is decoded again."""


def _cached_states(
    conn: sqlite3.Connection, agents: Sequence[str], cache: Decoded
) -> dict[str, AgentSkill]:
    """``_states``, decoding only the states whose text differs from the cached one."""
    found: dict[str, AgentSkill] = {}
    for agent, data in rows_in(
        conn, "SELECT agent_id, state_json FROM skill_states", "agent_id", agents
    ):
        known = cache.get(agent)
        if known is not None and known[0] == data:
            found[agent] = known[1]
            continue
        state = decode_state(data, f"skill_states/{agent}")
        if state is not None:
            cache.put(agent, (data, state))
            found[agent] = state
    return found


def _fleet(
    conn: sqlite3.Connection, cache: Lru[str, tuple[str, FleetSkill]] | None = None
) -> FleetSkill:
    """The fleet's state; with ``cache``, decoded only when its text differs from the
    cached one's."""
    found = conn.execute(
        "SELECT state_json FROM skill_states WHERE agent_id = ?", (FLEET,)
    ).fetchone()
    if found is None:
        return FleetSkill()
    known = None if cache is None else cache.get(FLEET)
    if known is not None and known[0] == found[0]:
        return known[1]
    fleet = decode_as(FLEET_SKILL, found[0], f"skill_states/{FLEET}")
    if cache is not None:
        cache.put(FLEET, (found[0], fleet))
    return fleet


class SqliteSkills(SqliteFile):
    """The skill methods of the SQLite store."""

    _skill_cache: Decoded | None = None
    _fleet_cache: Lru[str, tuple[str, FleetSkill]] | None = None

    def _decoded_skills(self) -> Decoded:
        """Skill states as last written or read by ``apply_skill`` and ``apply_skill_many``."""
        if self._skill_cache is None:
            self._skill_cache = Lru()
        return self._skill_cache

    def _decoded_fleet(self) -> Lru[str, tuple[str, FleetSkill]]:
        """The fleet's state as last read by ``apply_skill``, by its stored text."""
        if self._fleet_cache is None:
            self._fleet_cache = Lru(1)
        return self._fleet_cache

    async def apply_skill(self, key: str, agents: Sequence[str], fold: SkillFold) -> SkillApplied:
        """Check the key, read, fold and write in one job of the writer."""
        return await self._write(self._skill_job(key, agents, fold))

    def _skill_job(
        self, key: str, agents: Sequence[str], fold: SkillFold
    ) -> Callable[[sqlite3.Connection], SkillApplied]:
        """The job of ``apply_skill``: the states and the fleet's read through the caches
        of decoded states (by their stored text), each changed one remembered once
        committed."""
        wanted = [a for a in dict.fromkeys(agents) if a != FLEET]
        cache, fleets = self._decoded_skills(), self._decoded_fleet()

        def run(conn: sqlite3.Connection) -> SkillApplied:
            found = conn.execute(f"{_EVENT} WHERE key = ?", (key,)).fetchone()
            if found is not None:
                return SkillApplied(_event(found), created=False)
            commit = fold(_cached_states(conn, wanted, cache), _fleet(conn, fleets))
            (last,) = conn.execute("SELECT coalesce(max(seq), 0) FROM skill_events").fetchone()
            event = replaced(commit.event, seq=last + 1)
            conn.execute(
                "INSERT INTO skill_events (seq, key, kind, payload, payload_hash, at)"
                " VALUES (?,?,?,?,?,?)",
                (event.seq, key, event.kind, event.payload, event.payload_hash, event.at),
            )
            texts = {a: AGENT_SKILL.dump_json(state).decode() for a, state in commit.agents.items()}
            rows = [(agent, text, event.seq) for agent, text in texts.items()]
            if commit.fleet is not None:
                rows.append((FLEET, FLEET_SKILL.dump_json(commit.fleet).decode(), event.seq))
            conn.executemany(_UPSERT_STATE, rows)
            fresh = {agent: (texts[agent], state) for agent, state in commit.agents.items()}
            self._writer.after_commit(lambda: cache.update(fresh))
            return SkillApplied(event, created=True)

        return run

    async def apply_skill_many(
        self, items: Sequence[SkillItem], *, fresh: bool = False
    ) -> list[SkillApplied]:
        """Every item in one job of the writer: each its own event under its own key and
        seq; each changed state written once, at the end (one transaction). ``fresh``
        changes nothing: the job looks each key up in the same transaction."""
        return await self._write(self._skill_many_job(items))

    def _skill_many_job(
        self, items: Sequence[SkillItem]
    ) -> Callable[[sqlite3.Connection], list[SkillApplied]]:
        """The job of ``apply_skill_many`` (also run inside a larger one)."""
        cache, fleets = self._decoded_skills(), self._decoded_fleet()

        def run(conn: sqlite3.Connection) -> list[SkillApplied]:
            touched = list(dict.fromkeys(a for _, agents, _ in items for a in agents if a != FLEET))
            states = _cached_states(conn, touched, cache)
            fleet = _fleet(conn, fleets)
            (last,) = conn.execute("SELECT coalesce(max(seq), 0) FROM skill_events").fetchone()
            fresh: dict[str, SkillEvent] = {}
            changed: dict[str, tuple[AgentSkill, int]] = {}
            fleet_seq = 0
            out: list[SkillApplied] = []
            rows: list[tuple[object, ...]] = []
            keys = list(dict.fromkeys(key for key, _, _ in items))
            before = {row[1]: _event(row) for row in rows_in(conn, _EVENT, "key", keys)}
            for key, agents, fold in items:
                stored = fresh.get(key)
                stored = before.get(key) if stored is None else stored
                if stored is not None:
                    out.append(SkillApplied(stored, created=False))
                    continue
                commit = fold({a: states[a] for a in agents if a in states}, fleet)
                last += 1
                event = replaced(commit.event, seq=last)
                fresh[key] = event
                rows.append((last, key, event.kind, event.payload, event.payload_hash, event.at))
                states.update(commit.agents)
                changed.update({a: (s, last) for a, s in commit.agents.items()})
                if commit.fleet is not None:
                    fleet, fleet_seq = commit.fleet, last
                out.append(SkillApplied(event, created=True))
            conn.executemany(
                "INSERT INTO skill_events (seq, key, kind, payload, payload_hash, at)"
                " VALUES (?,?,?,?,?,?)",
                rows,
            )
            written = [
                (a, AGENT_SKILL.dump_json(s).decode(), seq) for a, (s, seq) in changed.items()
            ]
            fresh_states = {a: (text, changed[a][0]) for a, text, _ in written}
            if fleet_seq:
                written.append((FLEET, FLEET_SKILL.dump_json(fleet).decode(), fleet_seq))
            conn.executemany(_UPSERT_STATE, written)
            self._writer.after_commit(lambda: cache.update(fresh_states))
            return out

        return run

    async def commit_skill_fit(self, seq: int, fold: FitFold) -> None:
        """One job of the writer: the events after ``seq`` read, folded, and every state
        replaced, in one transaction; the states made and written ``FIT_GROUP`` at a time
        (their JSON never all held at once)."""
        cache = self._decoded_skills()

        def run(conn: sqlite3.Connection) -> None:
            found = conn.execute(f"{_EVENT} WHERE seq > ? ORDER BY seq", (seq,))
            newer = [_event(row) for row in found]
            commit = fold(newer)
            (last,) = conn.execute("SELECT coalesce(max(seq), 0) FROM skill_events").fetchone()
            conn.execute("DELETE FROM skill_states")
            fresh: dict[str, tuple[str, AgentSkill]] = {}
            for agent, state in commit.agents.items():
                fresh[agent] = (AGENT_SKILL.dump_json(state).decode(), state)
                if len(fresh) == FIT_GROUP:
                    conn.executemany(_UPSERT_STATE, [(a, t, last) for a, (t, _) in fresh.items()])
                    fresh = {}
            conn.executemany(_UPSERT_STATE, [(a, t, last) for a, (t, _) in fresh.items()])
            fleet = FLEET_SKILL.dump_json(commit.fleet).decode()
            conn.execute(_UPSERT_STATE, (FLEET, fleet, last))
            # the last group's states kept decoded (the cache holds a few anyway; an entry
            # is used only while its row holds the same text)
            self._writer.after_commit(lambda: cache.update(fresh))

        await self._write(run)

    async def get_skills(self, agent_ids: Collection[str]) -> dict[str, AgentSkill]:
        """In one read."""
        wanted = [a for a in dict.fromkeys(agent_ids) if a != FLEET]
        return await self._read_many(lambda c: _states(c, wanted), len(wanted))

    async def list_skills(self) -> list[AgentSkill]:
        """Every row but the fleet's, by agent id."""

        def run(conn: sqlite3.Connection) -> list[AgentSkill]:
            rows = conn.execute(
                "SELECT agent_id, state_json FROM skill_states WHERE agent_id != ?"
                " ORDER BY agent_id",
                (FLEET,),
            )
            states = (decode_state(data, f"skill_states/{a}") for a, data in rows)
            return [state for state in states if state is not None]

        return await self._read(run)

    async def get_fleet_skill(self) -> FleetSkill:
        """The fleet's row, decoded only when its text differs from the one last read or
        written here (a routing reads it before each answer: services/routing/projection)."""
        fleets = self._decoded_fleet()
        return await self._read_short(lambda conn: _fleet(conn, fleets))

    async def get_skill_event(self, key: str) -> SkillEvent | None:
        """By key."""

        def run(conn: sqlite3.Connection) -> SkillEvent | None:
            found = conn.execute(f"{_EVENT} WHERE key = ?", (key,)).fetchone()
            return None if found is None else _event(found)

        return await self._read_short(run)

    async def get_skill_events(self, keys: Collection[str]) -> dict[str, SkillEvent]:
        """By key, ``MANY`` keys to a query, on a reader thread."""
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return {}

        def run(conn: sqlite3.Connection) -> dict[str, SkillEvent]:
            events = (_event(row) for row in rows_in(conn, _EVENT, "key", wanted))
            return {event.key: event for event in events}

        return await self._read(run)

    async def skill_events(self, *, after: int = 0, limit: int = 1000) -> list[SkillEvent]:
        """A page of the log by seq."""

        def run(conn: sqlite3.Connection) -> list[SkillEvent]:
            rows = conn.execute(f"{_EVENT} WHERE seq > ? ORDER BY seq LIMIT ?", (after, limit))
            return [_event(row) for row in rows]

        return await self._read(run)

    async def count_skill_events(self, *, after: int = 0) -> int:
        """One range of the table's key (``seq`` is its rowid), on a reader thread: what
        it costs grows with the count, not with the log (0.07 ms for 10 events past ``after``,
        20 ms for 100,000: docs/benchmarks.md, "Counting what awaits the fit"; between two
        fits of ``serve`` the count is what arrived in ``skill.fit_interval_s``)."""

        def run(conn: sqlite3.Connection) -> int:
            (count,) = conn.execute(
                "SELECT count(*) FROM skill_events WHERE seq > ?", (after,)
            ).fetchone()
            return int(count)

        return await self._read(run)
