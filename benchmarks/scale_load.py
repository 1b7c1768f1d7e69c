"""Loading the scale benchmark's data: many agents and millions of ledger lines.

Judging millions of tasks one by one through the service would take hours, so the data
is built in two steps:

1. Templates: ``template_count`` agent histories are judged for real, through
   ``Oracle.submit_for_judgment`` on a ``SqliteStore``, each under a placeholder agent
   name. The rows the store wrote for them (events, ledger lines, profile,
   specializations, achievements) and the profile after each event are read back.
2. Stamping: every agent of the benchmark takes one template's history, with the
   placeholder replaced by its own name (in the agent id, contract ids and keys) and the
   request fingerprint recomputed. The rows are bulk-inserted with sqlite3 ``executemany``
   in large transactions (events interleaved across agents, as awards arrive), or
   published on the NATS store's own subjects. Registrations and rank stats go through
   the store's API.

So every stored profile is the replay of its events and its ledger (``oracle verify``
agrees; ``check_sample`` runs that verification on a sample). Templates are assigned so
that the ledger holds exactly the requested number of lines.
"""

from __future__ import annotations

import asyncio
import bisect
import hashlib
import json
import random
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from agentladder.domain.agents import AgentConfig
from agentladder.domain.profile import AgentProfile
from agentladder.domain.rules import OracleRules
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.services.clock import FixedClock
from agentladder.services.oracle.models import JudgmentRequest, VerifyReport
from agentladder.services.oracle.service import Oracle
from agentladder.services.oracle.verify import verify_store
from agentladder.store.base import Store
from agentladder.store.records import OracleCommit, Registration
from agentladder.store.sqlite.ops import event_from_row
from agentladder.store.sqlite.store import SqliteStore

__all__ = [
    "LOADER_VERSION",
    "TAGS",
    "TASK_TYPES",
    "Snapshot",
    "Template",
    "agent_name",
    "assign",
    "build_templates",
    "check_sample",
    "load_sqlite",
    "put_agents",
    "registration",
    "restore",
    "snapshot",
    "stamped",
]

LOADER_VERSION = 1
"""Part of the cache key: bump it when the loaded data changes."""

TASK_TYPES = ("sql", "code", "review", "audit", "translation", "summary", "vision", "math")
TAGS = ("sql", "python", "security", "vision", "translation", "legal", "finance", "math")
MODELS = (("openai", "gpt-4o"), ("anthropic", "claude"), ("mistral", "large"), ("local", "llama"))
LINES_PER_JUDGMENT = 3.6
"""A first guess of the ledger lines one judgment writes, to size the templates."""


def agent_name(index: int) -> str:
    """The benchmark's agent names: ``agent-000042``."""
    return f"agent-{index:06d}"


@dataclass
class Event:
    """One event of a template, as the SQLite store wrote it (placeholder agent id)."""

    key: str
    seq: int
    kind: str
    payload: str
    payload_hash: str
    result: str
    lines: str
    at: str
    canonical: str  # the request's canonical JSON: its sha256 is the payload_hash
    contract_id: str
    ledger: list[tuple[str, int]]  # (event, xp) of each xp_history line
    record: str = ""  # the NATS event message: {"event": ..., "profile": profile after it}
    claim: str = ""  # the NATS idempotency claim: the event's JSON


@dataclass
class Template:
    """One judged history under a placeholder name, and the rows it left."""

    name: str
    events: list[Event] = field(default_factory=list)
    profile: tuple[Any, ...] = ()  # agent_profiles columns after id
    specializations: list[tuple[Any, ...]] = field(default_factory=list)
    achievements: list[tuple[Any, ...]] = field(default_factory=list)

    @property
    def lines(self) -> int:
        """Ledger lines of the whole history."""
        return sum(len(e.ledger) for e in self.events)


def _requests(rng: random.Random, name: str, count: int) -> list[JudgmentRequest]:
    """``count`` judged tasks of one agent: 2 to 4 task types, mostly good work."""
    provider, model = rng.choice(MODELS)
    types = rng.sample(TASK_TYPES, rng.randint(2, 4))
    weights = [rng.random() + 0.2 for _ in types]
    quality = rng.uniform(5.0, 9.5)
    out = []
    for n in range(count):
        limit, budget = rng.choice((30_000.0, 60_000.0, 120_000.0)), rng.choice((0.02, 0.05, 0.1))
        draw = rng.random()
        score = None if draw < 0.05 else 10.0 if draw < 0.1 else rng.gauss(quality, 1.2)
        out.append(
            JudgmentRequest(
                agent_id=name, contract_id=f"{name}-t{n:04d}", new_agent=True,
                task_type=rng.choices(types, weights)[0],
                score=None if score is None else round(min(10.0, max(0.0, score)), 1),
                success=rng.random() < 0.93, retries=0 if rng.random() < 0.85 else 1,
                duration_ms=round(rng.uniform(0.3, 1.3) * limit), time_limit_ms=limit,
                cost=round(rng.uniform(0.4, 1.4) * budget, 4), budget=budget,
                provider=provider, model=model,
            )
        )  # fmt: skip
    return out


def _canonical(request: JudgmentRequest) -> str:
    return json.dumps(request.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))


async def _judge_templates(
    path: Path, count: int, mean_lines: float, seed: int, with_records: bool
) -> dict[str, tuple[list[str], list[AgentProfile]]]:
    """Judge every template's history through the Oracle; canonical requests and profiles."""
    rng = random.Random(seed)
    store = SqliteStore(path, synchronous="off")
    clock = FixedClock(datetime(2026, 1, 1, tzinfo=UTC))
    oracle = Oracle(store, OracleRules(), clock=clock)
    mean = max(1.0, mean_lines / LINES_PER_JUDGMENT)
    histories = {
        f"tmpl{k:05d}": _requests(rng, f"tmpl{k:05d}", max(1, round(rng.uniform(0.3, 1.7) * mean)))
        for k in range(count)
    }
    out: dict[str, tuple[list[str], list[AgentProfile]]] = {}

    async def judge(name: str, requests: list[JudgmentRequest]) -> None:
        canonical: list[str] = []
        records: list[AgentProfile] = []
        for request in requests:
            result = await oracle.submit_for_judgment(request)
            clock.advance(7)
            canonical.append(_canonical(request))
            if with_records:
                records.append(result.profile)
        out[name] = (canonical, records)

    try:
        names = list(histories)
        for start in range(0, len(names), 64):  # 64 histories at a time share commits
            await asyncio.gather(*(judge(n, histories[n]) for n in names[start : start + 64]))
    finally:
        await store.close()
    return out


def build_templates(
    folder: Path, count: int, mean_lines: float, *, seed: int = 11, with_records: bool = False
) -> list[Template]:
    """Judge ``count`` histories for real and read back what the store wrote for each.

    ``with_records``: also build the NATS messages of each event (its record, the profile
    after it, and its claim).
    """
    path = folder / "templates.db"
    judged = asyncio.run(_judge_templates(path, count, mean_lines, seed, with_records))
    conn = sqlite3.connect(path)
    try:
        templates = [_read_template(conn, name, *judged[name]) for name in sorted(judged)]
    finally:
        conn.close()
    return templates


def _read_template(
    conn: sqlite3.Connection, name: str, canonical: list[str], records: list[AgentProfile]
) -> Template:
    template = Template(name)
    columns = "agent_id, key, seq, kind, payload, payload_hash, result, lines, at"
    rows = conn.execute(
        f"SELECT {columns} FROM oracle_events WHERE agent_id = ? ORDER BY seq", (name,)
    ).fetchall()
    ledger = conn.execute(
        "SELECT event, xp_awarded, contract_id, timestamp FROM xp_history WHERE agent_id = ?"
        " ORDER BY id",
        (name,),
    ).fetchall()
    position = 0
    for index, row in enumerate(rows):
        _, key, seq, kind, payload, digest, result, lines, at = row
        count = len(json.loads(lines))
        mine = ledger[position : position + count]
        position += count
        contract_id = json.loads(payload)["contract_id"]
        assert all(line[2] == contract_id and line[3] == at for line in mine), name
        assert hashlib.sha256(canonical[index].encode()).hexdigest() == digest, name
        event = Event(
            key, seq, kind, payload, digest, result, lines, at, canonical[index], contract_id,
            [(line[0], line[1]) for line in mine],
        )  # fmt: skip
        if records:
            stored = event_from_row(row)
            event.record = OracleCommit(event=stored, profile=records[index]).model_dump_json()
            event.claim = stored.model_dump_json()
        template.events.append(event)
    assert position == len(ledger), name
    template.profile = conn.execute(
        "SELECT provider, model, xp, level, total_tasks, total_xp_earned, total_cost,"
        " average_score, success_rate, revision, profile_json FROM agent_profiles WHERE id = ?",
        (name,),
    ).fetchone()
    template.specializations = conn.execute(
        "SELECT task_type, xp, level, tasks_completed, avg_score, best_score, current_streak,"
        " tasks_judged FROM specializations WHERE agent_id = ? ORDER BY rowid",
        (name,),
    ).fetchall()
    template.achievements = conn.execute(
        "SELECT achievement, awarded_at, xp FROM achievements WHERE agent_id = ? ORDER BY id",
        (name,),
    ).fetchall()
    return template


def assign(templates: Sequence[Template], agents: int, lines: int, seed: int = 5) -> list[int]:
    """A template index per agent such that the ledger holds exactly ``lines`` lines.

    Random first, then agents are moved to the template whose line count brings the
    total closest to the target, until it is reached.
    """
    rng = random.Random(seed)
    counts = [t.lines for t in templates]
    by_count = sorted(range(len(templates)), key=lambda i: counts[i])
    sorted_counts = [counts[i] for i in by_count]
    chosen = [rng.randrange(len(templates)) for _ in range(agents)]
    total = sum(counts[c] for c in chosen)
    for _ in range(agents * 50):
        gap = lines - total
        if gap == 0:
            return chosen
        agent = rng.randrange(agents)
        want = counts[chosen[agent]] + gap
        at = bisect.bisect_left(sorted_counts, want)
        best = min(
            (by_count[i] for i in (at - 1, at) if 0 <= i < len(by_count)),
            key=lambda i: abs(counts[i] - want),
        )
        if abs(counts[best] - want) < abs(gap):
            total += counts[best] - counts[chosen[agent]]
            chosen[agent] = best
    raise ValueError(f"cannot place {lines:,} ledger lines on {agents:,} agents")


def stamped(template: Template, event: Event, agent: str) -> tuple[str, str, str, str, str]:
    """(key, payload, payload_hash, result, contract_id) of ``event`` for ``agent``."""
    name = template.name
    digest = hashlib.sha256(event.canonical.replace(name, agent).encode()).hexdigest()
    return (
        event.key.replace(name, agent),
        event.payload.replace(name, agent),
        digest,
        event.result.replace(name, agent),
        event.contract_id.replace(name, agent),
    )


def registration(rng: random.Random, agent: str, template: Template, now: float) -> Registration:
    """The agent's registration: the template's provider and model, 1 to 3 tags."""
    provider, model = template.profile[0], template.profile[1]
    config = AgentConfig(
        name=agent, provider_id=provider, model_name=model, description=f"{model} agent",
        capability_tags=tuple(rng.sample(TAGS, rng.randint(1, 3))),
        input_price_per_mtok=rng.choice((0.15, 1.0, 2.5, 3.0, 10.0)),
        output_price_per_mtok=rng.choice((0.6, 4.0, 10.0, 15.0, 30.0)),
    )  # fmt: skip
    seen = now - rng.uniform(0, 86_400)
    return Registration(config=config, first_seen=seen - 86_400, last_seen=seen, remote=True)


def rank_stats(rng: random.Random) -> AgentPerformanceStats:
    """Plausible rank stats: a few promotions, a full latency window."""
    rank = min(12, int(rng.expovariate(0.6)))
    latencies = tuple(round(rng.uniform(200, 4000), 1) for _ in range(64))
    done = rng.randint(64, 900)
    return AgentPerformanceStats(
        rank=rank, rounds_completed=done // 3, avg_score=round(rng.uniform(3, 9.5), 3),
        deliberations_completed=done // 6, wins=rank, updated_at=1_767_225_600,
        avg_latency_ms=sum(latencies) / len(latencies), tasks_completed=done,
        tasks_failed=rng.randint(0, 40), recent_latencies_ms=latencies,
    )  # fmt: skip


async def put_agents(store: Store, templates: Sequence[Template], chosen: Sequence[int]) -> None:
    """Every agent's registration and rank stats, through the store's API."""
    rng = random.Random(3)
    now = 1_767_225_600.0
    for start in range(0, len(chosen), 500):
        batch = range(start, min(len(chosen), start + 500))
        await asyncio.gather(
            *(store.put_registration(registration(rng, agent_name(i), templates[chosen[i]], now))
              for i in batch),
            *(store.commit_stats({agent_name(i): (rank_stats(rng), 0)}) for i in batch),
        )  # fmt: skip


def interleaved(chosen: Sequence[int], templates: Sequence[Template]) -> Iterator[tuple[int, int]]:
    """(agent, event index) in arrival order: every agent's n-th event, then the (n+1)-th."""
    depth = max(len(templates[c].events) for c in chosen)
    for n in range(depth):
        for agent, c in enumerate(chosen):
            if n < len(templates[c].events):
                yield agent, n


def load_sqlite(path: Path, templates: Sequence[Template], chosen: Sequence[int]) -> None:
    """Fill a new SQLite file: agents through the store, the rest bulk-inserted."""

    async def agents() -> None:
        store = SqliteStore(path, synchronous="off")
        try:
            await put_agents(store, templates, chosen)
        finally:
            await store.close()

    asyncio.run(agents())
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = OFF")  # a new file: a failed load is thrown away
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("PRAGMA cache_size = -1000000")
    events: list[tuple[Any, ...]] = []
    ledger: list[tuple[Any, ...]] = []

    def flush() -> None:
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO oracle_events (agent_id, key, seq, kind, payload, payload_hash,"
            " result, lines, at) VALUES (?,?,?,?,?,?,?,?,?)",
            events,
        )
        conn.executemany(
            "INSERT INTO xp_history (agent_id, event, xp_awarded, contract_id, timestamp)"
            " VALUES (?,?,?,?,?)",
            ledger,
        )
        conn.execute("COMMIT")
        events.clear()
        ledger.clear()

    for agent, n in interleaved(chosen, templates):
        template = templates[chosen[agent]]
        event = template.events[n]
        name = agent_name(agent)
        key, payload, digest, result, contract_id = stamped(template, event, name)
        events.append(
            (name, key, event.seq, event.kind, payload, digest, result, event.lines, event.at)
        )
        ledger.extend((name, e, xp, contract_id, event.at) for e, xp in event.ledger)
        if len(ledger) >= 500_000:
            flush()
    flush()
    order = list(range(len(chosen)))
    random.Random(9).shuffle(order)  # profiles arrive in no particular order
    conn.execute("BEGIN")
    for agent in order:
        template, name = templates[chosen[agent]], agent_name(agent)
        provider, model, *counters, profile_json = template.profile
        conn.execute(
            "INSERT INTO agent_profiles (id, provider, model, xp, level, total_tasks,"
            " total_xp_earned, total_cost, average_score, success_rate, revision, profile_json)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (name, provider, model, *counters, profile_json.replace(template.name, name)),
        )
        conn.executemany(
            "INSERT INTO specializations (agent_id, task_type, xp, level, tasks_completed,"
            " avg_score, best_score, current_streak, tasks_judged) VALUES (?,?,?,?,?,?,?,?,?)",
            [(name, *row) for row in template.specializations],
        )
        conn.executemany(
            "INSERT INTO achievements (agent_id, achievement, awarded_at, xp) VALUES (?,?,?,?)",
            [(name, *row) for row in template.achievements],
        )
    conn.execute("COMMIT")
    conn.execute("PRAGMA journal_mode = WAL")  # as the store keeps it
    conn.close()


class _Sample:
    """A store whose ``list_profiles`` returns only some agents (for ``verify_store``)."""

    def __init__(self, store: Store, agents: Sequence[str]) -> None:
        self._store = store
        self._agents = agents

    async def list_profiles(self) -> list[Any]:
        found = [await self._store.get_profile(a) for a in self._agents]
        return [v.value for v in found if v is not None]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


async def check_sample(store: Store, agents: int, size: int = 50) -> VerifyReport:
    """``oracle verify`` (replay of events and ledger) on ``size`` random agents."""
    sample = [agent_name(i) for i in random.Random(1).sample(range(agents), min(size, agents))]
    return await verify_store(cast(Store, _Sample(store, sample)), OracleRules())


Snapshot = dict[str, tuple[int, dict[str, list[tuple[Any, ...]]]]]
_PROFILE_TABLES = (
    ("agent_profiles", "id"),
    ("specializations", "agent_id"),
    ("achievements", "agent_id"),
)


def snapshot(path: Path, agents: Sequence[str]) -> tuple[Snapshot, dict[str, int]]:
    """The profile rows of ``agents`` and the autoincrement counters, to undo a run's writes."""
    conn = sqlite3.connect(path)
    try:
        rows: Snapshot = {}
        for agent in agents:
            (revision,) = conn.execute(
                "SELECT revision FROM agent_profiles WHERE id = ?", (agent,)
            ).fetchone()
            rows[agent] = (
                revision,
                {
                    table: conn.execute(
                        f"SELECT * FROM {table} WHERE {key} = ?", (agent,)
                    ).fetchall()
                    for table, key in _PROFILE_TABLES
                },
            )
        counters = dict(conn.execute("SELECT name, seq FROM sqlite_sequence").fetchall())
    finally:
        conn.close()
    return rows, counters


def restore(path: Path, rows: Snapshot, counters: dict[str, int]) -> None:
    """Undo the judgments made since ``snapshot``: the file holds the loaded data again."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("DELETE FROM xp_history WHERE id > ?", (counters.get("xp_history", 0),))
        for agent, (revision, tables) in rows.items():
            conn.execute(
                "DELETE FROM oracle_events WHERE agent_id = ? AND seq > ?", (agent, revision)
            )
            for table, key in _PROFILE_TABLES:
                conn.execute(f"DELETE FROM {table} WHERE {key} = ?", (agent,))
                if tables[table]:
                    marks = ",".join("?" * len(tables[table][0]))
                    conn.executemany(f"INSERT INTO {table} VALUES ({marks})", tables[table])
        for name, seq in counters.items():
            conn.execute("UPDATE sqlite_sequence SET seq = ? WHERE name = ?", (seq, name))
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
