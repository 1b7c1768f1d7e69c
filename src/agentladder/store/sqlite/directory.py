"""Agents' objects built by SQLite: ``GET /agents`` and the directory in one query each.

An agent's object is its registration's listing parts (kept beside it, migration 4), its
status (``domain.registry.status_within``: online while ``now - last_seen < window``) and
its rank stats' JSON as stored (``NO_STATS_JSON`` without any), concatenated in SQL; NULL
where a part is missing or the stats are not JSON, which the store then builds in Python.
The directory's filters, order and page (``store/directory.py``) are evaluated on the
stored JSON: the same agents in the same order as ``directory_from_reads``.
"""

from __future__ import annotations

from agentladder.domain.agents import INPUT_TOKENS_PER_ROUND, OUTPUT_TOKENS_PER_ROUND
from agentladder.domain.registry import AgentStatus
from agentladder.store.listing import NO_STATS_JSON
from agentladder.store.records import DirectoryQuery

__all__ = ["LISTING", "OBJECTS", "directory_sql", "joined", "object_args", "registration_filter"]

_ONLINE = "? - r.last_seen < ?"
_OBJECT = (
    "r.listing_head"
    f" || CASE WHEN {_ONLINE} THEN ? ELSE ? END"
    " || r.listing_tail"
    " || CASE WHEN s.stats_json IS NULL THEN ? WHEN json_valid(s.stats_json) THEN s.stats_json END"
    " || '}'"
)
_FROM = " FROM registrations r LEFT JOIN rank_stats s ON s.agent_id = r.agent_id"

OBJECTS = f"SELECT r.agent_id, {_OBJECT} AS object{_FROM} ORDER BY r.agent_id"
"""Every agent's object by agent id; arguments ``object_args``."""


def joined(objects: str) -> str:
    """The ``object`` column of the ordered query ``objects`` joined by commas, and how
    many of them are NULL (``group_concat`` skips them). An ordered subquery is not
    flattened into an aggregate: its rows reach ``group_concat`` in order."""
    return f"SELECT group_concat(object, ','), count(*) - count(object) FROM ({objects})"


LISTING = joined(OBJECTS)
"""Every agent's object by agent id, joined; arguments ``object_args``."""


def object_args(now: float, online_window_s: float) -> tuple[float | str, ...]:
    """The arguments of the object expression."""
    online, offline = AgentStatus.ONLINE.value, AgentStatus.OFFLINE.value
    return (now, online_window_s, online, offline, NO_STATS_JSON)


def _stat(name: str, default: str) -> str:
    """One field of the agent's stats (``default`` without stats or with stats that are not
    JSON, whose object is NULL and built in Python anyway)."""
    return (
        f"CASE WHEN json_valid(s.stats_json)"
        f" THEN coalesce(json_extract(s.stats_json, '$.{name}'), {default}) ELSE {default} END"
    )


_COST = (
    f"({INPUT_TOKENS_PER_ROUND} * json_extract(r.doc, '$.config.input_price_per_mtok')"
    f" + {OUTPUT_TOKENS_PER_ROUND} * json_extract(r.doc, '$.config.output_price_per_mtok'))"
    " / 1000000.0"
)  # domain.agents.estimated_cost_per_round, the same operations in the same order
_ORDER = {
    "name": "r.agent_id",
    "rank": f"{_stat('rank', '0')} DESC, r.agent_id",
    "avg_score": f"{_stat('avg_score', '0.0')} DESC, r.agent_id",
    "cost": f"{_COST}, r.agent_id",
}


def registration_filter(tag: str | None, provider: str | None) -> tuple[list[str], list[str]]:
    """The directory's tag and provider filters on the stored JSON (``doc``): conditions
    and their arguments."""
    clauses, args = [], []
    if tag is not None:
        clauses.append(
            "EXISTS (SELECT 1 FROM json_each(doc, '$.config.capability_tags') WHERE value = ?)"
        )
        args.append(tag)
    if provider is not None:
        clauses.append("json_extract(doc, '$.config.provider_id') = ?")
        args.append(provider)
    return clauses, args


def directory_sql(
    query: DirectoryQuery, now: float, online_window_s: float
) -> tuple[str, tuple[object, ...]]:
    """One query answering the objects of the agents ``query`` selects, joined by commas
    in its order and page, and how many of them are NULL."""
    clauses, filter_args = registration_filter(query.tag, query.provider)
    args: list[object] = [*object_args(now, online_window_s), *filter_args]
    if query.online is not None:
        clauses.append(f"({_ONLINE}) = ?")
        args += [now, online_window_s, 1 if query.online else 0]
    if query.min_rank:
        clauses.append(f"{_stat('rank', '0')} >= ?")
        args.append(query.min_rank)
    where = " WHERE " + " AND ".join(clauses) if clauses else ""
    limit = -1 if query.limit is None else query.limit
    inner = (
        f"SELECT {_OBJECT} AS object{_FROM}{where} ORDER BY {_ORDER[query.sort]} LIMIT ? OFFSET ?"
    )
    args += [limit, query.offset]
    return joined(inner), tuple(args)
